-- 012_webhook_secret_rotation: POST /v1/webhooks/:id/rotate_secret (docs/contract.md
-- section 13). The secret a rotation replaced keeps signing until
-- previous_secret_expires_at: until then every delivery carries two signatures, the new
-- secret's and this one's, so that a receiver can switch at its own pace. Sealed like the
-- current one; only one previous secret is kept (a second rotation replaces it).
ALTER TABLE webhook_subscriptions ADD COLUMN previous_secret_sealed text,
                                  ADD COLUMN previous_secret_expires_at timestamptz;
