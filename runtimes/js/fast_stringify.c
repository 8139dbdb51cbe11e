/* JSON.stringify(value[, null or undefined[, space]]) read straight from
   QuickJS's object layout into one StringBuffer. Included by quickjs_hugind.c.

   QuickJS's own stringify pays, per object, a [[Get]] of toJSON through the
   prototype chain, an Object.keys array, a [[Get]] per key and a quoted string
   allocated per key; per array element, a property read and the index turned
   into a string for a replacer that is not there. Under wasm every one of
   those instructions costs more than natively, and that was half of the json
   workload's gap to native QuickJS-NG.

   The walk here runs no JS at all: it handles only what it can read without
   calling anything (plain objects of data properties, fast arrays without
   holes, primitives), so nothing it reads can change under it. On anything
   else (a toJSON anywhere it would be looked up, a getter, a Proxy, a boxed
   primitive, a BigInt, a cycle, an integer-like key, a replacer, nesting past
   HJ_MAX_DEPTH) it drops what it wrote and calls the engine's
   js_json_stringify from the start: having run nothing, it has had no effect
   a restart could repeat, so the result and any exception are the engine's. */

/* Past this the engine's own stringify takes over. Also the size of the array
   of open containers the cycle check scans, which lives on the C stack. */
#define HJ_MAX_DEPTH 512
/* Prototype chains longer than this are left to the engine. */
#define HJ_MAX_PROTO_HOPS 64
/* Shapes remembered as checked by hj_shape_ok; a power of two. */
#define HJ_SHAPE_SLOTS 16

enum {
    HJ_WRITTEN,
    HJ_OMITTED, /* undefined, a function or a symbol: no output of its own */
    HJ_GIVE_UP, /* the engine's stringify must do this call */
    HJ_ERROR,   /* an exception is pending */
};

typedef struct HJStringify {
    JSContext *ctx;
    StringBuffer b;
    JSString *gap; /* NULL when the output is not indented */
    int depth;
    /* Shapes that passed hj_shape_ok: nothing the walk does can change a
       shape or a prototype, so the answer holds for the whole call. */
    JSShape *clean_shapes[HJ_SHAPE_SLOTS];
    uint8_t verdicts[HJ_SHAPE_SLOTS]; /* what hj_shape_ok said of each */
    JSObject *open[HJ_MAX_DEPTH];
} HJStringify;

/* What each byte becomes inside a JSON string: 0 itself, 'u' a \u escape,
   any other letter that letter after a backslash (JS_ToQuotedString's cases). */
static const char hj_escape[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    ['"'] = '"', ['\\'] = '\\',
};

/* Appending ASCII to the buffer. Its string is always a plain one
   (js_alloc_string), its text right after the header, so while the buffer is
   8-bit and has room the bytes go straight there: string_buffer_putc8 and
   string_buffer_write8 would find the text through strv's switch on the
   string's kind at every call, a third of the work for a short key. */
static inline void hj_put(StringBuffer *b, const uint8_t *text, int n) {
    if (likely(!b->is_wide_char && b->len + n <= b->size)) {
        memcpy((uint8_t *)&b->str[1] + b->len, text, n);
        b->len += n;
    } else {
        string_buffer_write8(b, text, n);
    }
}

/* Where n more bytes go in the 8-bit text, or NULL: a wide buffer, or no
   memory (the slow way then reports that). */
static inline uint8_t *hj_room(StringBuffer *b, int n) {
    if (unlikely(b->is_wide_char))
        return NULL;
    if (unlikely(b->len + n > b->size) && string_buffer_realloc(b, b->len + n, 0))
        return NULL;
    return (uint8_t *)&b->str[1] + b->len;
}

static inline void hj_putc(StringBuffer *b, uint8_t c) {
    if (likely(!b->is_wide_char && b->len < b->size))
        ((uint8_t *)&b->str[1])[b->len++] = c;
    else
        string_buffer_putc8(b, c);
}

static void hj_write_escape(StringBuffer *b, uint32_t c, char letter) {
    static const char hex[] = "0123456789abcdef"; /* the engine prints %04x */
    uint8_t text[6] = {'\\', (uint8_t)letter};
    if (letter != 'u') {
        hj_put(b, text, 2);
        return;
    }
    text[2] = hex[(c >> 12) & 15];
    text[3] = hex[(c >> 8) & 15];
    text[4] = hex[(c >> 4) & 15];
    text[5] = hex[c & 15];
    hj_put(b, text, 6);
}

/* Whether none of eight bytes needs an escape: none below 0x20, none a quote
   or a backslash (the exact any-byte tests of "Bit Twiddling Hacks"). */
static inline int hj_word_plain(const uint8_t *at) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t x;
    memcpy(&x, at, 8);
    uint64_t quote = x ^ (ones * '"'), backslash = x ^ (ones * '\\');
    uint64_t hits = ((x - ones * 0x20) & ~x) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash);
    return (hits & highs) == 0;
}

/* The text JS_ToQuotedString gives, written into the buffer in runs between
   escapes instead of into a string of its own. A surrogate is escaped unless
   it is the high half of a pair whose low half follows (which string_getc
   reads as one code point and the engine writes back as the same two units). */
static void hj_quote(StringBuffer *b, JSString *p) {
    uint32_t len = p->len, run = 0, i = 0;
    hj_putc(b, '"');
    if (!p->is_wide_char) {
        const uint8_t *s = str8(p);
        while (i < len) {
            if (i + 8 <= len && hj_word_plain(s + i)) {
                i += 8;
                continue;
            }
            for (uint32_t end = len - i > 8 ? i + 8 : len; i < end; i++) {
                char letter = hj_escape[s[i]];
                if (likely(!letter))
                    continue;
                hj_put(b, s + run, (int)(i - run));
                hj_write_escape(b, s[i], letter);
                run = i + 1;
            }
        }
        hj_put(b, s + run, (int)(len - run));
    } else {
        const uint16_t *s = str16(p);
        for (; i < len; i++) {
            uint32_t c = s[i];
            char letter = 'u';
            if (c < 0x100) {
                letter = hj_escape[c];
                if (likely(!letter))
                    continue;
            } else if (!is_surrogate(c)) {
                continue;
            } else if (is_hi_surrogate(c) && i + 1 < len && is_lo_surrogate(s[i + 1])) {
                i++;
                continue;
            }
            string_buffer_write16(b, s + run, (int)(i - run));
            hj_write_escape(b, c, letter);
            run = i + 1;
        }
        string_buffer_write16(b, s + run, (int)(len - run));
    }
    hj_putc(b, '"');
}

/* A rope is flattened the way the engine's ToString would, then quoted. */
static int hj_quote_rope(HJStringify *s, JSValueConst rope) {
    JSValue flat = JS_ToString(s->ctx, rope);
    if (JS_IsException(flat))
        return HJ_ERROR;
    hj_quote(&s->b, JS_VALUE_GET_STRING(flat));
    JS_FreeValue(s->ctx, flat);
    return HJ_WRITTEN;
}

/* Number to text as the engine's ToString does it (i32toa for an int, and for
   a double the conversion quickjs.c's own calls reach: fast_dtoa.c, else
   js_dtoa); NaN and the infinities are null in JSON. Not inlined: its buffers
   would otherwise sit in every level of the recursion. */
static no_inline void hj_number(StringBuffer *b, JSValueConst v) {
    char text[128];
    size_t len;
    if (JS_VALUE_GET_TAG(v) == JS_TAG_INT) {
        len = i32toa(text, JS_VALUE_GET_INT(v));
    } else {
        double d = JS_VALUE_GET_FLOAT64(v);
        if (!isfinite(d)) {
            hj_put(b, (const uint8_t *)"null", 4);
            return;
        }
        JSDTOATempMem scratch;
        if (js_dtoa_max_len(d, 10, 0, JS_DTOA_FORMAT_FREE) >= (int)sizeof(text)) {
            /* Never in radix 10; the engine's conversion copes if it were. */
            string_buffer_concat_value(b, v);
            return;
        }
        len = (size_t)hugind_js_dtoa(text, d, 10, 0, JS_DTOA_FORMAT_FREE, &scratch);
    }
    hj_put(b, (const uint8_t *)text, (int)len);
}

/* Whether [[Get]] of toJSON would find nothing anywhere from `proto` up,
   judged by own-property lookups alone. That holds for an object without
   exotic behaviour and for an Array (whose exotic part concerns indices and
   length only); on anything else [[Get]] could run code, so no. */
static int hj_chain_clean(JSObject *proto) {
    JSProperty *pr;
    for (int hops = 0; proto != NULL; hops++) {
        if (hops == HJ_MAX_PROTO_HOPS)
            return 0;
        if (proto->is_exotic && proto->class_id != JS_CLASS_ARRAY)
            return 0;
        if (find_own_property(&pr, proto, JS_ATOM_toJSON))
            return 0;
        proto = proto->shape->proto;
    }
    return 1;
}

/* Whether a key is written as it is between the quotes. */
static int hj_plain_text(JSString *key) {
    if (key->is_wide_char)
        return 0;
    const uint8_t *s = str8(key);
    for (uint32_t i = 0; i < key->len; i++) {
        if (hj_escape[s[i]])
            return 0;
    }
    return 1;
}

#define HJ_SHAPE_OK 1
#define HJ_SHAPE_PLAIN_KEYS 2 /* every key is 8-bit text that needs no escape */

/* Whether the engine's js_json_check would find no toJSON on `p`, and its
   enumerable string keys are data properties none of which is an array index
   (Object.keys would list those first, in numeric order): 0, or HJ_SHAPE_OK
   with maybe HJ_SHAPE_PLAIN_KEYS. All of it is a property of p's shape (its
   keys, their flags, its prototype), so it is worked out once per shape. */
static int hj_shape_ok(HJStringify *s, JSObject *p) {
    JSShape *sh = p->shape;
    unsigned slot = ((uintptr_t)sh >> 4) & (HJ_SHAPE_SLOTS - 1);
    JSProperty *pr;
    if (s->clean_shapes[slot] == sh)
        return s->verdicts[slot];
    if (find_own_property(&pr, p, JS_ATOM_toJSON) || !hj_chain_clean(sh->proto))
        return 0;
    int verdict = HJ_SHAPE_OK | HJ_SHAPE_PLAIN_KEYS;
    JSShapeProperty *prs = get_shape_prop(sh);
    for (int i = 0; i < sh->prop_count; i++, prs++) {
        uint32_t index;
        /* A deleted property keeps its slot, with no flags. */
        if (!(prs->flags & JS_PROP_ENUMERABLE))
            continue;
        if (__JS_AtomIsTaggedInt(prs->atom))
            return 0;
        JSString *key = s->ctx->rt->atom_array[prs->atom];
        if (key->atom_type != JS_ATOM_TYPE_STRING)
            continue; /* a symbol or a private name: never written */
        if ((prs->flags & JS_PROP_TMASK) != JS_PROP_NORMAL || JS_AtomIsArrayIndex(s->ctx, &index, prs->atom))
            return 0;
        if (!hj_plain_text(key))
            verdict = HJ_SHAPE_OK;
    }
    s->clean_shapes[slot] = sh;
    s->verdicts[slot] = (uint8_t)verdict;
    return verdict;
}

/* A line break and `levels` copies of the gap, before an item or a closing
   bracket of indented output. */
static void hj_newline(HJStringify *s, int levels) {
    hj_putc(&s->b, '\n');
    for (int i = 0; i < levels; i++)
        string_buffer_concat(&s->b, s->gap, 0, s->gap->len);
}

/* Open a container. A cycle (the engine throws "circular reference"), nesting
   past the bound and a C stack near the runtime's limit (the engine's check
   throws there) are the engine's to handle. */
static int hj_enter(HJStringify *s, JSObject *p) {
    if (s->depth == HJ_MAX_DEPTH || js_check_stack_overflow(s->ctx->rt, 0))
        return HJ_GIVE_UP;
    for (int i = 0; i < s->depth; i++) {
        if (s->open[i] == p)
            return HJ_GIVE_UP;
    }
    s->open[s->depth++] = p;
    return HJ_WRITTEN;
}

static int hj_value(HJStringify *s, JSValueConst v);

/* A plain object whose shape passed hj_shape_ok (`verdict`): its own
   enumerable string-keyed properties in the order Object.keys gives them,
   which for an object with no integer-like key is the order of its shape. */
static int hj_object(HJStringify *s, JSObject *p, int verdict) {
    JSRuntime *rt = s->ctx->rt;
    StringBuffer *b = &s->b;
    int written = 0, r = hj_enter(s, p);
    if (r != HJ_WRITTEN)
        return r;
    hj_putc(b, '{');
    JSShape *sh = p->shape;
    JSShapeProperty *prs = get_shape_prop(sh);
    for (int i = 0; i < sh->prop_count; i++, prs++) {
        if (!(prs->flags & JS_PROP_ENUMERABLE))
            continue;
        JSString *key = rt->atom_array[prs->atom];
        if (key->atom_type != JS_ATOM_TYPE_STRING)
            continue;
        int mark = b->len;
        uint8_t *at = NULL;
        if ((verdict & HJ_SHAPE_PLAIN_KEYS) && !s->gap)
            at = hj_room(b, (int)key->len + 4);
        if (at) {
            /* the common case in one go: [,]"key": */
            uint8_t *to = at;
            if (written)
                *to++ = ',';
            *to++ = '"';
            memcpy(to, str8(key), key->len);
            to += key->len;
            *to++ = '"';
            *to++ = ':';
            b->len += (int)(to - at);
        } else {
            if (written)
                hj_putc(b, ',');
            if (s->gap)
                hj_newline(s, s->depth);
            hj_quote(b, key);
            hj_putc(b, ':');
            if (s->gap)
                hj_putc(b, ' ');
        }
        r = hj_value(s, p->prop[i].u.value);
        if (r == HJ_OMITTED) {
            b->len = mark; /* the key goes too */
            continue;
        }
        if (r != HJ_WRITTEN)
            return r;
        written = 1;
    }
    if (written && s->gap)
        hj_newline(s, s->depth - 1);
    hj_putc(b, '}');
    s->depth--;
    return b->error_status ? HJ_ERROR : HJ_WRITTEN;
}

/* A fast array whose length is its element count: any other length means
   holes at the end, read through the prototype chain. */
static int hj_array(HJStringify *s, JSObject *p) {
    StringBuffer *b = &s->b;
    JSValue length = p->prop[0].u.value;
    uint32_t count = p->u.array.count;
    if (JS_VALUE_GET_TAG(length) != JS_TAG_INT || (uint32_t)JS_VALUE_GET_INT(length) != count)
        return HJ_GIVE_UP;
    int r = hj_enter(s, p);
    if (r != HJ_WRITTEN)
        return r;
    hj_putc(b, '[');
    for (uint32_t i = 0; i < count; i++) {
        if (i > 0)
            hj_putc(b, ',');
        if (s->gap)
            hj_newline(s, s->depth);
        r = hj_value(s, p->u.array.u.values[i]);
        if (r == HJ_OMITTED)
            hj_put(b, (const uint8_t *)"null", 4);
        else if (r != HJ_WRITTEN)
            return r;
    }
    if (count > 0 && s->gap)
        hj_newline(s, s->depth - 1);
    hj_putc(b, ']');
    s->depth--;
    return b->error_status ? HJ_ERROR : HJ_WRITTEN;
}

static int hj_value(HJStringify *s, JSValueConst v) {
    StringBuffer *b = &s->b;
    switch (JS_VALUE_GET_NORM_TAG(v)) {
    case JS_TAG_STRING:
        hj_quote(b, JS_VALUE_GET_STRING(v));
        return HJ_WRITTEN;
    case JS_TAG_STRING_ROPE:
        return hj_quote_rope(s, v);
    case JS_TAG_INT:
    case JS_TAG_FLOAT64:
        hj_number(b, v);
        return HJ_WRITTEN;
    case JS_TAG_BOOL:
        if (JS_VALUE_GET_BOOL(v))
            hj_put(b, (const uint8_t *)"true", 4);
        else
            hj_put(b, (const uint8_t *)"false", 5);
        return HJ_WRITTEN;
    case JS_TAG_NULL:
        hj_put(b, (const uint8_t *)"null", 4);
        return HJ_WRITTEN;
    case JS_TAG_UNDEFINED:
    case JS_TAG_SYMBOL:
        return HJ_OMITTED;
    case JS_TAG_OBJECT:
        break;
    default:
        return HJ_GIVE_UP; /* a BigInt: a toJSON of its prototype, or a TypeError */
    }
    JSObject *p = JS_VALUE_GET_OBJ(v);
    if (p->class_id == JS_CLASS_OBJECT && !p->is_exotic) {
        int verdict = hj_shape_ok(s, p);
        return verdict ? hj_object(s, p, verdict) : HJ_GIVE_UP;
    }
    if (p->class_id == JS_CLASS_ARRAY && p->fast_array)
        return hj_shape_ok(s, p) ? hj_array(s, p) : HJ_GIVE_UP;
    /* A function is left out, unless it has a toJSON (which would be called);
       a callable Proxy is exotic. */
    if (!p->is_exotic && JS_IsFunction(s->ctx, v))
        return hj_shape_ok(s, p) ? HJ_OMITTED : HJ_GIVE_UP;
    return HJ_GIVE_UP;
}

/* The gap the engine would indent with, for a `space` argument that needs no
   conversion it could observe: a number (clamped to 0..10 spaces) or a string
   (its first 10 units). 0: set (maybe to none); 1: leave the call to the
   engine; -1: an exception. */
static int hj_gap(HJStringify *s, JSValueConst space) {
    JSContext *ctx = s->ctx;
    JSValue gap = JS_UNDEFINED;
    if (JS_IsNumber(space)) {
        int n;
        if (JS_ToInt32Clamp(ctx, &n, space, 0, 10, 0))
            return -1;
        if (n > 0)
            gap = js_new_string8_len(ctx, "          ", n);
    } else if (JS_IsString(space)) {
        JSValue text = JS_ToString(ctx, space);
        if (JS_IsException(text))
            return -1;
        JSString *p = JS_VALUE_GET_STRING(text);
        if (p->len > 0)
            gap = js_sub_string(ctx, p, 0, min_int(p->len, 10));
        JS_FreeValue(ctx, text);
    } else if (JS_IsObject(space)) {
        return 1; /* a Number or String object is converted by calling into it */
    }
    if (JS_IsException(gap))
        return -1;
    s->gap = JS_IsUndefined(gap) ? NULL : JS_VALUE_GET_STRING(gap);
    return 0;
}

/* JSON.stringify as shim.c installs it (its name, length 3 and constructor-less
   shape are the original's). */
JSValue hugind_json_stringify(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv) {
    /* A C function of length 3 always sees three arguments, missing ones undefined. */
    JSValueConst replacer = argv[1];
    if (!JS_IsUndefined(replacer) && !JS_IsNull(replacer))
        return js_json_stringify(ctx, this_val, argc, argv);
    HJStringify s;
    memset(s.clean_shapes, 0, sizeof(s.clean_shapes));
    memset(s.verdicts, 0, sizeof(s.verdicts));
    s.ctx = ctx;
    s.depth = 0;
    int gap = hj_gap(&s, argv[2]);
    if (gap < 0)
        return JS_EXCEPTION;
    if (gap > 0)
        return js_json_stringify(ctx, this_val, argc, argv);
    string_buffer_init(ctx, &s.b, 64);
    int r = hj_value(&s, argv[0]);
    if (s.gap)
        JS_FreeValue(ctx, JS_MKPTR(JS_TAG_STRING, s.gap));
    if (s.b.error_status || r == HJ_ERROR) {
        string_buffer_free(&s.b);
        return JS_EXCEPTION;
    }
    if (r == HJ_WRITTEN)
        return string_buffer_end(&s.b);
    string_buffer_free(&s.b);
    if (r == HJ_OMITTED)
        return JS_UNDEFINED;
    return js_json_stringify(ctx, this_val, argc, argv);
}
