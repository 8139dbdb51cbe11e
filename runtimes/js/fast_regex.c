/* Where an unanchored regexp search may start. Included by libregexp_hugind.c,
   after libregexp.c, whose lre_exec it wraps.

   QuickJS compiles a search without the sticky flag with a prefix that tries the
   pattern at each position in turn (split, any, goto: "about the same as .*?"),
   so each position where the pattern fails at once still costs the interpreter
   six or more dispatches and a backtrack state pushed and popped. Under wasm each
   dispatch also pays an epoch check. Most patterns tell at once where a match
   can start:
   - one whose first step is `^` without the m flag can only match at the
     start of the input (marked, like most lexers, runs many of those over the
     rest of its input, and each failure scanned all of it);
   - one whose first step that reads a character (after captures' starts and
     zero-width tests such as \b) is a character or class can only start where
     that character or class matches.
   So here the positions are chosen by a loop in C, and the pattern's body (the
   bytecode after the prefix) runs only where it can match, in the same order,
   as the prefix would have run it. The test of a position is the body's own
   first step, done the way lre_exec_backtrack does it. A pattern that starts in
   any other way (an alternative, a loop, a lookaround, a back reference, . or
   \s) runs as before. */

/* The three instructions QuickJS puts before a non-sticky pattern. */
#define SEARCH_PREFIX_LEN 11

static bool search_prefix_at(const uint8_t *pc) {
    return pc[0] == REOP_split_goto_first && get_u32(pc + 1) == 6 && pc[5] == REOP_any && pc[6] == REOP_goto &&
           (int32_t)get_u32(pc + 7) == -SEARCH_PREFIX_LEN;
}

enum start_rule { START_ANYWHERE, START_AT_INPUT_START, START_WHERE_OP_MATCHES };

/* The body's first step that reads a character, skipping the ones that read
   none; *rule says how it limits where a match starts. */
static const uint8_t *first_reading_step(const uint8_t *pc, const uint8_t *end, enum start_rule *rule,
                                         bool *only_saves_before) {
    *rule = START_ANYWHERE;
    *only_saves_before = true;
    while (pc < end) {
        switch (pc[0]) {
        case REOP_save_start:
            pc += reopcode_info[pc[0]].size;
            break;
        case REOP_save_end:
        case REOP_save_reset:
        case REOP_set_char_pos:
        case REOP_set_i32:
        case REOP_word_boundary:
        case REOP_word_boundary_i:
        case REOP_not_word_boundary:
        case REOP_not_word_boundary_i:
        case REOP_line_start_m:
            *only_saves_before = false;
            pc += reopcode_info[pc[0]].size;
            break;
        case REOP_line_start:
            *rule = START_AT_INPUT_START;
            return pc;
        case REOP_char:
        case REOP_char_i:
        case REOP_char32:
        case REOP_char32_i:
        case REOP_range:
        case REOP_range_i:
        case REOP_range32:
        case REOP_range32_i:
            *rule = START_WHERE_OP_MATCHES;
            return pc;
        default:
            return NULL;
        }
    }
    return NULL;
}

/* Whether c lies in one of the n sorted [low, high] pairs of `size`-byte
   bounds (2 or 4) in `table`. */
static bool in_ranges(const uint8_t *table, int n, int size, uint32_t c) {
    for (int lo = 0, hi = n - 1; lo <= hi;) {
        int mid = (lo + hi) / 2;
        const uint8_t *pair = table + mid * 2 * size;
        uint32_t low = size == 2 ? get_u16(pair) : get_u32(pair);
        uint32_t high = size == 2 ? get_u16(pair + 2) : get_u32(pair + 4);
        if (c < low)
            hi = mid - 1;
        else if (c > high)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

/* Whether the step at `op` accepts the character c: lre_exec_backtrack's test. */
static bool step_accepts(const uint8_t *op, uint32_t c, bool is_unicode) {
    uint8_t opcode = op[0];
    if (opcode == REOP_char_i || opcode == REOP_char32_i || opcode == REOP_range_i || opcode == REOP_range32_i)
        c = lre_canonicalize(c, is_unicode);
    switch (opcode) {
    case REOP_char:
    case REOP_char_i:
        return c == get_u16(op + 1);
    case REOP_char32:
    case REOP_char32_i:
        return c == get_u32(op + 1);
    case REOP_range:
    case REOP_range_i: {
        int n = get_u16(op + 1);
        if (c >= 0xffff && get_u16(op + 3 + (n - 1) * 4 + 2) == 0xffff)
            return true; /* 0xffff as the last bound stands for no bound */
        return in_ranges(op + 3, n, 2, c);
    }
    default: /* range32, range32_i */
        return in_ranges(op + 3, get_u16(op + 1), 4, c);
    }
}

/* Which characters below 256 the step accepts, as a bitmap: the scan's test.
   A search with the g flag calls lre_exec once per match, so the bitmap of the
   last step seen is kept, under a copy of the step's bytes (which alone decide
   what it accepts, with the unicode flag); a step too long to copy gets a new
   bitmap at each call. */
#define STEP_KEY_MAX 64
static struct {
    uint8_t key[STEP_KEY_MAX];
    size_t key_len;
    bool is_unicode;
    uint8_t bits[32];
} latin1_cache;

static size_t step_size(const uint8_t *op) {
    switch (op[0]) {
    case REOP_range:
    case REOP_range_i:
        return 3 + get_u16(op + 1) * 4;
    case REOP_range32:
    case REOP_range32_i:
        return 3 + get_u16(op + 1) * 8;
    default:
        return reopcode_info[op[0]].size;
    }
}

static const uint8_t *latin1_acceptance(const uint8_t *step, bool is_unicode) {
    size_t len = step_size(step);
    if (len <= STEP_KEY_MAX && len == latin1_cache.key_len && is_unicode == latin1_cache.is_unicode &&
        memcmp(latin1_cache.key, step, len) == 0)
        return latin1_cache.bits;
    memset(latin1_cache.bits, 0, sizeof latin1_cache.bits);
    for (uint32_t c = 0; c < 256; c++)
        if (step_accepts(step, c, is_unicode))
            latin1_cache.bits[c >> 3] |= (uint8_t)(1u << (c & 7));
    latin1_cache.key_len = len <= STEP_KEY_MAX ? len : 0;
    latin1_cache.is_unicode = is_unicode;
    memcpy(latin1_cache.key, step, latin1_cache.key_len);
    return latin1_cache.bits;
}

static bool has_back_reference(const uint8_t *pc, const uint8_t *end) {
    while (pc < end) {
        uint8_t op = pc[0];
        if (op >= REOP_COUNT || op == REOP_back_reference || op == REOP_back_reference_i ||
            op == REOP_backward_back_reference || op == REOP_backward_back_reference_i)
            return true; /* (an unknown opcode counts as one: no skipping) */
        pc += step_size(pc);
    }
    return false;
}

/* Whether the body starts (after capture starts only) with an unbounded loop
   of the step, x+, and refers to no capture. Then an attempt that failed at p
   fails at each later position up to the end of the run of characters x
   accepts there: a match at such a p', with x+ taking p'..r and the rest
   matching from r, would make x+ taking p..r and the same rest a match at p.
   So the search goes on after that run. It saves the pattern's quadratic
   retries inside each word for patterns such as /([a-z]+)@/. */
static bool failure_skips_run(const uint8_t *step, const uint8_t *body, const uint8_t *end) {
    const uint8_t *next = step + step_size(step);
    if (end - next < 5 || (next[0] != REOP_split_goto_first && next[0] != REOP_split_next_first))
        return false;
    if (next + 5 + (int32_t)get_u32(next + 1) != step)
        return false;
    return !has_back_reference(body, end);
}

/* The first position from cptr whose character the step accepts (accepted
   false) or rejects (accepted true), or end: the Latin-1 bitmap decides below
   256, the step itself above. */
static const uint8_t *skip_while(const uint8_t *cptr, const uint8_t *end, int type, const uint8_t *latin1,
                                 const uint8_t *step, bool is_unicode, bool accepted) {
    if (type == 0) {
        while (cptr < end && ((latin1[*cptr >> 3] >> (*cptr & 7)) & 1) == accepted)
            cptr++;
        return cptr;
    }
    while (cptr < end) {
        uint32_t c;
        PEEK_CHAR(c, cptr, end, type);
        bool ok = c < 256 ? (latin1[c >> 3] >> (c & 7)) & 1 : step_accepts(step, c, is_unicode);
        if (ok != accepted)
            break;
        GET_CHAR(c, cptr, end, type);
    }
    return cptr;
}

static void clear_captures(uint8_t **capture, int capture_count) {
    for (int i = 0; i < capture_count * 2; i++)
        capture[i] = NULL;
}

int lre_exec(uint8_t **capture, const uint8_t *bc_buf, const uint8_t *cbuf, int cindex, int clen, int cbuf_type,
             void *opaque) {
    int re_flags = lre_get_flags(bc_buf);
    const uint8_t *code = bc_buf + RE_HEADER_LEN;
    const uint8_t *code_end = code + get_u32(bc_buf + RE_HEADER_BYTECODE_LEN);
    const uint8_t *body = code + SEARCH_PREFIX_LEN;
    enum start_rule rule = START_ANYWHERE;
    bool only_saves_before = false;
    const uint8_t *step = NULL;
    if (!(re_flags & LRE_FLAG_STICKY) && code_end - code > SEARCH_PREFIX_LEN && search_prefix_at(code))
        step = first_reading_step(body, code_end, &rule, &only_saves_before);
    if (step == NULL)
        return hugind_lre_exec_upstream(capture, bc_buf, cbuf, cindex, clen, cbuf_type, opaque);

    /* The context, set up as lre_exec sets it up. */
    REExecContext s_s, *s = &s_s;
    s->is_unicode = (re_flags & (LRE_FLAG_UNICODE | LRE_FLAG_UNICODE_SETS)) != 0;
    s->capture_count = bc_buf[RE_HEADER_CAPTURE_COUNT];
    s->cbuf = cbuf;
    s->cbuf_end = cbuf + (clen << cbuf_type);
    s->cbuf_type = cbuf_type == 1 && s->is_unicode ? 2 : cbuf_type;
    s->interrupt_counter = INTERRUPT_COUNTER_INIT;
    s->opaque = opaque;
    s->stack_buf = s->static_stack_buf;
    s->stack_size = countof(s->static_stack_buf);
    int type = s->cbuf_type;
    const uint8_t *end = s->cbuf_end;
    const uint8_t *cptr = cbuf + (cindex << cbuf_type);
    if (0 < cindex && cindex < clen && type == 2) {
        const uint16_t *p = (const uint16_t *)cptr;
        if (is_lo_surrogate(*p) && is_hi_surrogate(p[-1]))
            cptr = (const uint8_t *)(p - 1);
    }

    const uint8_t *latin1 = rule == START_WHERE_OP_MATCHES ? latin1_acceptance(step, s->is_unicode) : NULL;
    bool skip_run = rule == START_WHERE_OP_MATCHES && only_saves_before && failure_skips_run(step, body, code_end);
    intptr_t ret = 0;
    for (;;) {
        if (rule == START_AT_INPUT_START) {
            if (cptr != cbuf)
                break;
        } else {
            /* Skip to the next position whose character the first step accepts;
               the step reads one, so the end of the input is no candidate. */
            cptr = skip_while(cptr, end, type, latin1, step, s->is_unicode, false);
            if (cptr >= end)
                break;
        }
        /* A failed attempt can leave the captures it set (nothing was pushed to
           undo them), which the prefix's own backtrack state would have undone. */
        clear_captures(capture, s->capture_count);
        ret = lre_exec_backtrack(s, capture, body, cptr);
        if (ret != 0 || rule == START_AT_INPUT_START || cptr >= end)
            break;
        uint32_t c;
        GET_CHAR(c, cptr, end, type); /* the prefix's `any` */
        (void)c;
        if (skip_run)
            cptr = skip_while(cptr, end, type, latin1, step, s->is_unicode, true);
    }
    if (ret == 0)
        clear_captures(capture, s->capture_count);
    if (s->stack_buf != s->static_stack_buf)
        lre_realloc(s->opaque, s->stack_buf, 0);
    return (int)ret;
}
