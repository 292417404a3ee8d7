/* libxml2 loaded when first needed, for the statically linked command-line tool
 * (cmake/static_cli.cmake). Only URDF import (src/mech/urdf.c) uses libxml2, but linking it shared
 * made every run load libxml2, ICU (libicuuc, libicudata), libstdc++, zlib and lzma and apply
 * their ~12,000 relocations before main: 13.4 million cycles of dynamic loading for a
 * `mblin --version`, most of a small model's start. This file defines the libxml2 entry points
 * urdf.c calls; the first call dlopen()s libxml2.so.2 (once, also when sweep threads read URDF
 * models at the same time) and forwards to it, so a run that reads no URDF never loads it. If it
 * cannot be loaded, reading XML fails with an error that says so (xmlGetLastError). The library
 * itself (libmblin) still links libxml2 directly. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlmemory.h>

static struct {
    void *lib;
    xmlFreeFunc *free_fn; /* libxml2 exports xmlFree as a variable holding its deallocator */
    xmlDocPtr (*read_memory)(const char *, int, const char *, const char *, int);
    xmlNodePtr (*root_element)(const xmlDoc *);
    xmlChar *(*get_prop)(const xmlNode *, const xmlChar *);
    long (*line_no)(const xmlNode *);
    void (*free_doc)(xmlDocPtr);
    void (*reset_last_error)(void);
    xmlErrorPtr (*last_error)(void);
} X;
static pthread_once_t x_once = PTHREAD_ONCE_INIT;
static xmlError load_error;
static char load_msg[512];

static void x_load(void)
{
    X.lib = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!X.lib) {
        const char *why = dlerror();
        snprintf(load_msg, sizeof load_msg, "libxml2 could not be loaded (%s)\n", why ? why : "dlopen failed");
        load_error.message = load_msg;
        load_error.level = XML_ERR_FATAL;
        return;
    }
    X.free_fn = dlsym(X.lib, "xmlFree");
    *(void **)&X.read_memory = dlsym(X.lib, "xmlReadMemory");
    *(void **)&X.root_element = dlsym(X.lib, "xmlDocGetRootElement");
    *(void **)&X.get_prop = dlsym(X.lib, "xmlGetProp");
    *(void **)&X.line_no = dlsym(X.lib, "xmlGetLineNo");
    *(void **)&X.free_doc = dlsym(X.lib, "xmlFreeDoc");
    *(void **)&X.reset_last_error = dlsym(X.lib, "xmlResetLastError");
    *(void **)&X.last_error = dlsym(X.lib, "xmlGetLastError");
}

static void x_init(void) { pthread_once(&x_once, x_load); }

static void xml_free_forward(void *p)
{
    x_init();
    if (X.free_fn && *X.free_fn) (*X.free_fn)(p);
}

xmlFreeFunc xmlFree = xml_free_forward;

xmlDocPtr xmlReadMemory(const char *buffer, int size, const char *URL, const char *encoding, int options)
{
    x_init();
    return X.read_memory ? X.read_memory(buffer, size, URL, encoding, options) : NULL;
}

xmlNodePtr xmlDocGetRootElement(const xmlDoc *doc)
{
    x_init();
    return X.root_element ? X.root_element(doc) : NULL;
}

xmlChar *xmlGetProp(const xmlNode *node, const xmlChar *name)
{
    x_init();
    return X.get_prop ? X.get_prop(node, name) : NULL;
}

long xmlGetLineNo(const xmlNode *node)
{
    x_init();
    return X.line_no ? X.line_no(node) : 0;
}

void xmlFreeDoc(xmlDocPtr cur)
{
    x_init();
    if (X.free_doc) X.free_doc(cur);
}

void xmlResetLastError(void)
{
    x_init();
    if (X.reset_last_error) X.reset_last_error();
}

xmlErrorPtr xmlGetLastError(void)
{
    x_init();
    if (!X.lib) return &load_error;
    return X.last_error ? X.last_error() : NULL;
}
