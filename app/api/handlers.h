/* handlers: one function per route, each in its own file. A handler runs after the key,
 * the rate limit, the route and the scope were checked; it validates its own input and
 * writes the whole response (success or error) into the request. */
#ifndef MARKET_HANDLERS_H
#define MARKET_HANDLERS_H

#include "request.h"

void handle_products_list(request *r);   /* products_list.c */
void handle_product_get(request *r);     /* product_get.c */
void handle_seller_get(request *r);      /* seller_get.c */
void handle_orders_list(request *r);     /* orders_list.c */
void handle_download_link(request *r);   /* download_link.c */
void handle_webhooks_create(request *r); /* webhooks_create.c */
void handle_file(request *r);            /* file.c: the download location, no API key */

#endif
