# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Optional compiled fast path of the shared walk (:mod:`checks.scan`): see ``_walkc.pyi``.

A read-only walk of a tree lxml owns, in libxml2's own structures: the cheap per-element
decisions (which tags matter, whether every attribute name is plain, whether the pooled plain
values may hold anything) are made on the C strings; Python objects are made only for the
elements the Python checks must see. Whatever it cannot decide exactly it leaves to the Python
walk (the specification) by returning None, having recorded nothing. Bounded by
``max_elements``; every text is read up to its NUL terminator only; no pointer outlives a call.
"""

from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.string cimport memcpy
from lxml.includes cimport tree
from lxml.includes.etreepublic cimport _Element, elementFactory, import_lxml__etree

import_lxml__etree()

cdef object _PLAIN = frozenset()
cdef char _HINT_TEXT[1024]  # the lower-case ASCII hints, each NUL-terminated
cdef Py_ssize_t _HINT_AT[64]  # where each starts in _HINT_TEXT
cdef Py_ssize_t _HINTS = 0
cdef unsigned char _CLASS[256]  # 2: a byte that gates outright, 1: one a hint may start with
cdef object _TAG_INFO = None
cdef object _SUSPICIOUS = None

DEF CACHE = 128  # per-call name caches (open addressing; when full, names are looked up uncached)


def configure(plain_names, css_hints, tag_info, suspicious):
    """What the Python walk decides with: its plain names, CSS hints, tag infos, pooled test."""
    global _PLAIN, _HINTS, _TAG_INFO, _SUSPICIOUS
    cdef Py_ssize_t used = 0, count = 0
    cdef bytes raw
    first = bytearray(256)
    for hint in css_hints:
        raw = hint.encode("ascii")
        if not raw or raw != raw.lower() or b"\0" in raw:
            raise ValueError(f"a hint must be non-empty lower-case ASCII: {hint!r}")
        if count >= 64 or used + len(raw) + 1 > 1024:
            raise ValueError("too many CSS hints for the compiled walk")
        memcpy(_HINT_TEXT + used, <char*>raw, <size_t>(len(raw) + 1))
        _HINT_AT[count] = used
        used += len(raw) + 1
        count += 1
        first[raw[0]] = 1
        first[raw.upper()[0]] = 1
    for c in range(256):
        # non-ASCII (lower-casing it could matter), "<", ":", "\" and "@"
        _CLASS[c] = 2 if c >= 128 or c in b"<:\\@" else first[c]
    _PLAIN = frozenset(plain_names)
    _HINTS = count
    _TAG_INFO = tag_info
    _SUSPICIOUS = suspicious


cdef struct Slot:
    const tree.xmlChar* name
    const tree.xmlChar* href
    int value


cdef struct Buffer:  # the pooled values, each followed by '"'
    char* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef struct Totals:
    Py_ssize_t count  # elements
    Py_ssize_t values  # pooled values
    Py_ssize_t chars  # their characters
    Py_ssize_t longest  # characters of the longest
    int gated  # 1 when one of them may make the pooled test true


cdef inline const tree.xmlChar* _href(tree.xmlNs* ns) noexcept:
    return ns.href if ns is not NULL else NULL


cdef Py_ssize_t _slot(Slot* table, const tree.xmlChar* name, const tree.xmlChar* href) noexcept:
    """The slot of (name, href) in ``table``, or an empty one for it; -1 when the table is full."""
    cdef size_t h = ((<size_t>name) >> 4) ^ ((<size_t>href) >> 6)
    cdef Py_ssize_t i, at
    for i in range(CACHE):
        at = <Py_ssize_t>((h + <size_t>i) % CACHE)
        if table[at].name is NULL or (table[at].name == name and table[at].href == href):
            return at
    return -1


cdef str _qualified(const tree.xmlChar* name, const tree.xmlChar* href):
    """lxml's name of a node: ``{href}name`` or ``name``."""
    cdef str local = (<const char*>name).decode("utf-8")
    if href is NULL:
        return local
    return "{" + (<const char*>href).decode("utf-8") + "}" + local


cdef int _lookup(Slot* table, const tree.xmlChar* name, tree.xmlNs* ns, bint is_tag) except -1:
    """1 if the tag is special or tracked (``is_tag``) / the attribute name is not plain, else 0."""
    cdef const tree.xmlChar* href = _href(ns)
    cdef Py_ssize_t at = _slot(table, name, href)
    cdef int value
    if at >= 0 and table[at].name is not NULL:
        return table[at].value
    if is_tag:
        info = _TAG_INFO(_qualified(name, href))
        value = 1 if (info[2] or info[3]) else 0
    else:
        value = 0 if _qualified(name, href) in _PLAIN else 1
    if at >= 0:
        table[at].name = name
        table[at].href = href
        table[at].value = value
    return value


cdef inline bint _has_lt(const tree.xmlChar* s) noexcept:
    if s is NULL:
        return False
    while s[0] != 0:
        if s[0] == 60:  # "<"
            return True
        s += 1
    return False


cdef bint _other_ok(tree.xmlNode* node, bint escaped) noexcept:
    """Whether a non-element node inside the root keeps the fast path (the Python walk's test)."""
    cdef int t = node.type
    if t == tree.XML_TEXT_NODE or t == tree.XML_CDATA_SECTION_NODE:
        return not (escaped and _has_lt(node.content))
    if t == tree.XML_COMMENT_NODE:
        return not _has_lt(node.content)
    return False  # processing instruction, entity reference, XInclude marker, anything else


cdef int _append(Buffer* buf, const unsigned char* s, Py_ssize_t n) except -1:
    """Append ``n`` bytes of ``s`` and a '"' (the buffer grows; its size is checked)."""
    cdef Py_ssize_t need, cap
    cdef char* grown
    if n < 0 or n > (<Py_ssize_t>0x3FFFFFFFFFFFFFFF) - buf.size - 1:
        raise OverflowError("attribute values too large")
    need = buf.size + n + 1
    if need > buf.capacity:
        cap = buf.capacity if buf.capacity > 0 else 4096
        while cap < need:
            cap *= 2
        grown = <char*>PyMem_Realloc(buf.data, <size_t>cap)
        if grown is NULL:
            raise MemoryError()
        buf.data = grown
        buf.capacity = cap
    if n > 0:
        memcpy(buf.data + buf.size, s, <size_t>n)
    buf.data[buf.size + n] = 34  # '"'
    buf.size = need
    return 0


cdef bint _hint_at(const unsigned char* p) noexcept:
    """Whether a CSS hint starts at ``p`` (ASCII case-insensitive; stops at the NUL)."""
    cdef const unsigned char* h
    cdef unsigned char d
    cdef Py_ssize_t j, k
    for j in range(_HINTS):
        h = <const unsigned char*>(_HINT_TEXT + _HINT_AT[j])
        k = 0
        while h[k] != 0:
            d = p[k]  # at worst the NUL, which ends the comparison
            if 65 <= d <= 90:
                d += 32
            if d != h[k]:
                break
            k += 1
        if h[k] == 0:
            return True
    return False


cdef int _pool_value(const unsigned char* s, Buffer* buf, Totals* t) except -1:
    """Pool one plain value: measure it, test it for what could make the pooled test true."""
    cdef const unsigned char* p = s
    cdef Py_ssize_t chars = 0
    cdef unsigned char c, k
    while p[0] != 0:
        c = p[0]
        chars += (c & 0xC0) != 0x80  # not a UTF-8 continuation byte: a character starts
        k = _CLASS[c]
        if k and not t.gated and (k == 2 or _hint_at(p)):
            t.gated = 1
        p += 1
    _append(buf, s, p - s)
    t.values += 1
    t.chars += chars
    if chars > t.longest:
        t.longest = chars
    return 0


cdef int _attributes(tree.xmlNode* node, Slot* names, Buffer* buf, Totals* t) except -2:
    """1 if an attribute name is not plain, 0 when all are (their values pooled), -1: give up."""
    cdef tree.xmlAttr* attr = node.properties
    cdef int odd = 0
    while attr is not NULL:
        if attr.children is not NULL and (
            attr.children.next is not NULL or attr.children.type != tree.XML_TEXT_NODE
        ):
            return -1  # a value in several nodes (an entity reference): left to lxml
        if _lookup(names, attr.name, attr.ns, False):
            odd = 1
        attr = attr.next
    if odd:
        return 1
    attr = node.properties
    while attr is not NULL:
        if attr.children is not NULL and attr.children.content is not NULL:
            _pool_value(<const unsigned char*>attr.children.content, buf, t)
        else:
            _pool_value(<const unsigned char*>b"", buf, t)
        attr = attr.next
    return 0


cdef tree.xmlNode* _first_element(tree.xmlNode* node, bint escaped, bint* ok) noexcept:
    """The first element from ``node`` on among its siblings, testing the nodes passed."""
    while node is not NULL and node.type != tree.XML_ELEMENT_NODE:
        if not _other_ok(node, escaped):
            ok[0] = False
            return NULL
        node = node.next
    return node


cdef object _walk(_Element root, Py_ssize_t max_elements, bint escaped, Buffer* buf, Totals* t):
    """The elements to hand to Python, in document order; None to leave the walk to Python."""
    cdef tree.xmlNode* top = root._c_node
    cdef tree.xmlNode* node = top
    cdef tree.xmlNode* child
    cdef Slot tags[CACHE]
    cdef Slot names[CACHE]
    cdef bint ok = True
    cdef int odd
    cdef Py_ssize_t i
    cdef list notes = []
    for i in range(CACHE):
        tags[i].name = NULL
        names[i].name = NULL
    while True:
        t.count += 1
        if t.count > max_elements:
            return None
        odd = _attributes(node, names, buf, t)
        if odd < 0:
            return None
        if odd or _lookup(tags, node.name, node.ns, True):
            notes.append((elementFactory(root._doc, node), odd == 1))
        child = _first_element(node.children, escaped, &ok)
        while child is NULL and ok:
            if node == top:
                return notes
            child = _first_element(node.next, escaped, &ok)
            if child is NULL:
                node = node.parent
        if not ok:
            return None
        node = child


def walk(_Element root not None, Py_ssize_t max_elements, bint escaped):
    """The shared walk's common case: (elements, notes, joined length, longest value) or None."""
    cdef Buffer buf
    cdef Totals t
    cdef tree.xmlNode* after
    if root._c_node is NULL or root._c_node.type != tree.XML_ELEMENT_NODE or _TAG_INFO is None:
        return None
    if escaped:  # the root's tail is text too
        after = root._c_node.next
        while after is not NULL:
            if after.type in (tree.XML_TEXT_NODE, tree.XML_CDATA_SECTION_NODE):
                if _has_lt(after.content):
                    return None
            after = after.next
    buf.data = NULL
    buf.size = buf.capacity = 0
    t.count = t.values = t.chars = t.longest = t.gated = 0
    try:
        notes = _walk(root, max_elements, escaped, &buf, &t)
        if notes is None:
            return None
        joined = t.chars + t.values - 1 if t.values else 0
        if t.gated and joined > 0:
            if _SUSPICIOUS(buf.data[: buf.size - 1].decode("utf-8")):
                return None  # the Python walk records the pooled values one by one
        return t.count, notes, joined, t.longest
    finally:
        PyMem_Free(buf.data)
