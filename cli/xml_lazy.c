/* libxml2 loaded when first needed, for the statically linked command-line tool
 * (cmake/static_cli.cmake). Only URDF import (src/mech/urdf.c) uses libxml2, but linking it shared
 * made every run load libxml2, ICU (libicuuc, libicudata), libstdc++, zlib and lzma and apply
 * their ~12,000 relocations before main: 13.4 million cycles of dynamic loading for a
 * `mblin --version`, most of a small model's start. This file defines the libxml2 entry points
 * urdf.c calls; the first call dlopen()s libxml2.so.2 and forwards to it, so a run that reads no
 * URDF never loads it. If it cannot be loaded, reading XML fails with an error that says so
 * (xmlGetLastError). The library itself (libmblin) still links libxml2 directly. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlmemory.h>

static void *xml_lib;
static xmlError load_error;
static char load_msg[512];

/* The loaded library, or NULL (then load_error says why). */
static void *xml_handle(void)
{
    if (xml_lib) return xml_lib;
    xml_lib = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!xml_lib) {
        const char *why = dlerror();
        snprintf(load_msg, sizeof load_msg, "libxml2 could not be loaded (%s)\n", why ? why : "dlopen failed");
        memset(&load_error, 0, sizeof load_error);
        load_error.message = load_msg;
        load_error.level = XML_ERR_FATAL;
    }
    return xml_lib;
}

/* Address of libxml2's symbol name, or NULL. */
static void *xml_sym(const char *name)
{
    void *h = xml_handle();
    return h ? dlsym(h, name) : NULL;
}

#define XML_FORWARD(ret, name, params, args, fail)            \
    ret name params                                           \
    {                                                         \
        static ret(*fn) params;                               \
        if (!fn) *(void **)&fn = xml_sym(#name);              \
        return fn ? fn args : fail;                           \
    }

static void xml_free_forward(void *p);

/* libxml2 exports xmlFree as a variable holding its deallocator */
xmlFreeFunc xmlFree = xml_free_forward;

static void xml_free_forward(void *p)
{
    xmlFreeFunc *real = xml_sym("xmlFree");
    if (real && *real) (*real)(p);
}

XML_FORWARD(xmlDocPtr, xmlReadMemory, (const char *buffer, int size, const char *URL, const char *encoding, int options),
            (buffer, size, URL, encoding, options), NULL)
XML_FORWARD(xmlNodePtr, xmlDocGetRootElement, (const xmlDoc *doc), (doc), NULL)
XML_FORWARD(xmlChar *, xmlGetProp, (const xmlNode *node, const xmlChar *name), (node, name), NULL)
XML_FORWARD(long, xmlGetLineNo, (const xmlNode *node), (node), 0)

void xmlFreeDoc(xmlDocPtr cur)
{
    static void (*fn)(xmlDocPtr);
    if (!fn) *(void **)&fn = xml_sym("xmlFreeDoc");
    if (fn) fn(cur);
}

void xmlResetLastError(void)
{
    static void (*fn)(void);
    if (!fn) *(void **)&fn = xml_sym("xmlResetLastError");
    if (fn) fn();
}

xmlErrorPtr xmlGetLastError(void)
{
    static xmlErrorPtr (*fn)(void);
    if (!fn) *(void **)&fn = xml_sym("xmlGetLastError");
    return fn ? fn() : (xml_lib ? NULL : &load_error);
}
