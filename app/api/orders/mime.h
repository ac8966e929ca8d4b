/* mime: the Content-Type of a downloaded file, from its file name's extension.
 *
 * The files location answers with X-Accel-Redirect and nginx keeps the worker's
 * Content-Type for the file it then streams (the stack's nginx has no MIME map of its
 * own). Only types that browsers never run in the files site's origin are named here
 * (no text/html, no image/svg+xml: an SVG opened in the browser runs its scripts);
 * everything else is application/octet-stream. */
#ifndef MARKET_MIME_H
#define MARKET_MIME_H

const char *mime_type(const char *filename);

#endif
