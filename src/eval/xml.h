/*
 * A small, tolerant XML reader for annotation files (Pascal VOC): elements, their character
 * data and their children. Attributes, comments, processing instructions and DOCTYPE are
 * skipped; CDATA is text; the five predefined entities and numeric character references below
 * 128 are decoded (others are kept as written). Namespaces are not interpreted.
 *
 *     struct eb_xml_node *doc = NULL;
 *     if (eb_xml_parse(text, len, &doc, &diag) == EB_OK) {
 *         const struct eb_xml_node *ann = eb_xml_child(doc, "annotation");
 *         puts(eb_xml_text(eb_xml_child(ann, "filename")));
 *         eb_xml_free(doc);
 *     }
 */
#ifndef EB_EVAL_XML_H
#define EB_EVAL_XML_H

#include <stddef.h>

#include "eb/diag.h"

/* Deepest element nesting accepted. */
#define EB_XML_MAX_DEPTH 64

struct eb_xml_node {
    char *name;                   /* element name; "" for the document node */
    char *text;                   /* its own character data, blanks trimmed at both ends */
    struct eb_xml_node *children; /* n_children elements, in document order */
    size_t n_children, cap_children;
};

/**
 * Parses `len` bytes into a tree whose root is a document node holding the top-level
 * elements. EB_ERR_FORMAT with the line number for a tag that is not closed, a closing tag
 * that does not match, nesting deeper than EB_XML_MAX_DEPTH or text cut inside a tag;
 * EB_ERR_NOMEM. Caller owns `*root_out` (eb_xml_free); written only on EB_OK.
 */
EB_NODISCARD enum eb_status eb_xml_parse(const char *text, size_t len,
                                         struct eb_xml_node **root_out, struct eb_diag *diag);

/** Frees a tree from eb_xml_parse; accepts NULL. */
void eb_xml_free(struct eb_xml_node *root);

/** The first child element of `node` named `name`, or NULL (also when node is NULL). */
const struct eb_xml_node *eb_xml_child(const struct eb_xml_node *node, const char *name);

/** The element's trimmed text; "" when node is NULL or has none. Never NULL. */
const char *eb_xml_text(const struct eb_xml_node *node);

#endif
