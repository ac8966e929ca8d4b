/* mime: the types a download may be served as, apart from file.c so that the list is short,
 * reviewed in one place and unit tested: a type that a browser would run in the files
 * site's origin is left out on purpose (mime.h). */
#include "mime.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *ext;
    const char *type;
} types[] = {
    {"7z", "application/x-7z-compressed"},
    {"csv", "text/csv"},
    {"epub", "application/epub+zip"},
    {"flac", "audio/flac"},
    {"gif", "image/gif"},
    {"gz", "application/gzip"},
    {"jpeg", "image/jpeg"},
    {"jpg", "image/jpeg"},
    {"json", "application/json"},
    {"m4a", "audio/mp4"},
    {"mov", "video/quicktime"},
    {"mp3", "audio/mpeg"},
    {"mp4", "video/mp4"},
    {"ogg", "audio/ogg"},
    {"otf", "font/otf"},
    {"pdf", "application/pdf"},
    {"png", "image/png"},
    {"tar", "application/x-tar"},
    {"tgz", "application/gzip"},
    {"ttf", "font/ttf"},
    {"txt", "text/plain"},
    {"wav", "audio/wav"},
    {"webm", "video/webm"},
    {"webp", "image/webp"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"zip", "application/zip"},
};

const char *mime_type(const char *filename)
{
    const char *dot = strrchr(filename, '.');
    if (dot != NULL) {
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
            if (strcasecmp(dot + 1, types[i].ext) == 0)
                return types[i].type;
        }
    }
    return "application/octet-stream";
}
