#!/bin/sh
# Test helper: a throwaway CA and a server certificate for localhost / 127.0.0.1 / ::1,
# for a local HTTPS receiver trusted through MARKET_WEBHOOK_CA_FILE.
#   tests/webhooks/make-certs.sh DIR   -> DIR/ca.pem, DIR/server.pem, DIR/server.key
set -eu
dir=$1
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=market webhook test CA" \
    -keyout ca.key -out ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
    -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\n' >ext.cnf
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
    -extfile ext.cnf -out server.pem 2>/dev/null
rm -f server.csr ext.cnf ca.srl
