/* A stable merge sort for the two sorts whose comparisons call JS:
   Array.prototype.sort (and toSorted) with or without a comparator, and
   %TypedArray%.prototype.sort with one. Included by quickjs_hugind.c.

   Each comparison there is a JS call (or a ToString and a string compare),
   so the number of comparisons is the cost. QuickJS's rqsort, an introsort,
   made 3.75M comparisons sorting 200k random numbers; binary insertion into runs
   of 32, then bottom-up merges, make 3.33M (node's TimSort 3.26M; log2(n!) is
   3.23M), and n - 1 plus one per merge on input already in order. The order it gives is the one the
   engine's comparators already define: equal elements keep their order.

   It needs a scratch array as large as the input; when that cannot be had,
   rqsort sorts in place, as before. A comparator that throws makes every later
   comparison return 0 (the comparators' own rule), so the sort ends quickly and
   the caller reports the exception. */

#define HUGIND_SORT_RUN 32

#define HUGIND_DEFINE_MERGE_SORT(NAME, T, cmp)                                                          \
    static void NAME(T *a, T *scratch, size_t n, void *opaque) {                        \
        for (size_t lo = 0; lo < n; lo += HUGIND_SORT_RUN) {                                       \
            size_t hi = n - lo < HUGIND_SORT_RUN ? n : lo + HUGIND_SORT_RUN;                       \
            int ordered = 1; /* so far each element was in place: try that first */               \
            for (size_t i = lo + 1; i < hi; i++) {                                                 \
                size_t left = lo, right = i;                                                       \
                if (ordered) {                                                                     \
                    if (cmp(&a[i - 1], &a[i], opaque) <= 0)                                        \
                        continue;                                                                  \
                    ordered = 0;                                                                   \
                    right = i - 1; /* a[i - 1] is greater */                                       \
                }                                                                                  \
                T x = a[i];                                                                        \
                while (left < right) { /* the first element greater than x */                     \
                    size_t mid = left + (right - left) / 2;                                        \
                    if (cmp(&x, &a[mid], opaque) < 0)                                              \
                        right = mid;                                                               \
                    else                                                                           \
                        left = mid + 1;                                                            \
                }                                                                                  \
                for (size_t k = i; k > left; k--)                                                  \
                    a[k] = a[k - 1];                                                               \
                a[left] = x;                                                                       \
            }                                                                                      \
        }                                                                                          \
        T *from = a, *to = scratch;                                                                \
        for (size_t width = HUGIND_SORT_RUN; width < n; width *= 2) {                              \
            for (size_t lo = 0; lo < n; lo += 2 * width) {                                         \
                size_t mid = n - lo < width ? n : lo + width;                                      \
                size_t hi = n - mid < width ? n : mid + width;                                     \
                size_t i = lo, j = mid, k = lo;                                                    \
                if (mid < hi && cmp(&from[mid - 1], &from[mid], opaque) > 0) {                     \
                    while (i < mid && j < hi) /* the right one first only if smaller */            \
                        to[k++] = cmp(&from[j], &from[i], opaque) < 0 ? from[j++] : from[i++];     \
                }                                                                                  \
                while (i < mid)                                                                    \
                    to[k++] = from[i++];                                                           \
                while (j < hi)                                                                     \
                    to[k++] = from[j++];                                                           \
            }                                                                                      \
            T *swap = from;                                                                        \
            from = to;                                                                             \
            to = swap;                                                                             \
        }                                                                                          \
        if (from != a)                                                                             \
            memcpy(a, from, n * sizeof(T));                                                        \
    }

/* How every comparison of two slots ends: the sign of the comparator's
   result (NaN counts as 0), and for equal elements the order of their
   positions, so that equal elements keep their order. The positions are read
   only for a tie (reading them every time cost 17M wasm instructions in a sort
   of 200k numbers). */
static inline int hugind_slot_order(double result, const ValueSlot *ap, const ValueSlot *bp) {
    int sign = (result > 0) - (result < 0);
    return sign != 0 ? sign : (ap->pos > bp->pos) - (ap->pos < bp->pos);
}

/* js_array_cmp_generic, except that a comparator is called the way the
   interpreter calls a function: with arguments this call owns (duplicated),
   which the callee may overwrite and which are freed afterwards. JS_Call would
   have the callee copy them into its frame and free the copies, two more loops
   per comparison. */
static int hugind_array_cmp(const void *a, const void *b, void *opaque) {
    struct array_sort_context *psc = opaque;
    if (!psc->has_method || psc->exception)
        return js_array_cmp_generic(a, b, opaque);
    JSContext *ctx = psc->ctx;
    const ValueSlot *ap = a, *bp = b;
    JSValue argv[2] = {js_dup(ap->val), js_dup(bp->val)};
    JSValue res = JS_CallInternal(ctx, psc->method, JS_UNDEFINED, JS_UNDEFINED, 2, argv, 0);
    JS_FreeValue(ctx, argv[0]);
    JS_FreeValue(ctx, argv[1]);
    if (JS_IsException(res))
        goto exception;
    if (JS_VALUE_GET_TAG(res) == JS_TAG_INT)
        return hugind_slot_order(JS_VALUE_GET_INT(res), ap, bp);
    double val;
    if (JS_ToFloat64Free(ctx, &val, res) < 0)
        goto exception;
    return hugind_slot_order(val, ap, bp);
exception:
    psc->exception = 1;
    return 0;
}

/* The two comparators most code passes, (a, b) => a - b and (a, b) => b - a,
   are pure: with numbers for arguments, a call has no effect but its result,
   whose sign is that of the subtraction. When the comparator's bytecode is
   exactly that subtraction and every element is a number, the sort computes
   the sign itself instead of calling: the same comparisons with the same
   results, so the same order, without a JS call each. Anything else (another
   body, a non-number element, which could run valueOf) calls the function. */
enum { HUGIND_CMP_CALL, HUGIND_CMP_LEFT_MINUS_RIGHT, HUGIND_CMP_RIGHT_MINUS_LEFT };

static int hugind_numeric_comparator(JSValueConst fn) {
    if (JS_VALUE_GET_TAG(fn) != JS_TAG_OBJECT)
        return HUGIND_CMP_CALL;
    JSObject *p = JS_VALUE_GET_OBJ(fn);
    if (p->class_id != JS_CLASS_BYTECODE_FUNCTION)
        return HUGIND_CMP_CALL;
    const JSFunctionBytecode *b = p->u.func.function_bytecode;
    if (b->func_kind != JS_FUNC_NORMAL || b->byte_code_len != 4)
        return HUGIND_CMP_CALL;
    const uint8_t *pc = b->byte_code_buf;
    if (pc[2] != OP_sub || pc[3] != OP_return)
        return HUGIND_CMP_CALL;
    if (pc[0] == OP_get_arg0 && pc[1] == OP_get_arg1)
        return HUGIND_CMP_LEFT_MINUS_RIGHT;
    if (pc[0] == OP_get_arg1 && pc[1] == OP_get_arg0)
        return HUGIND_CMP_RIGHT_MINUS_LEFT;
    return HUGIND_CMP_CALL;
}

static int hugind_all_numbers(const ValueSlot *slots, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!JS_IsNumber(slots[i].val))
            return 0;
    }
    return 1;
}

static inline double hugind_number_of(JSValueConst v) {
    return JS_VALUE_GET_TAG(v) == JS_TAG_INT ? JS_VALUE_GET_INT(v) : JS_VALUE_GET_FLOAT64(v);
}

/* The subtraction's result goes through hugind_slot_order as a called
   comparator's would. (Doubles subtract to 0 only when equal, -0 and 0
   included, and to NaN only when one is NaN or both are the same infinity, so
   its sign is also that of comparing them.) */
static int hugind_cmp_left_minus_right(const void *a, const void *b, void *opaque) {
    const ValueSlot *ap = a, *bp = b;
    return hugind_slot_order(hugind_number_of(ap->val) - hugind_number_of(bp->val), ap, bp);
}

static int hugind_cmp_right_minus_left(const void *a, const void *b, void *opaque) {
    const ValueSlot *ap = a, *bp = b;
    return hugind_slot_order(hugind_number_of(bp->val) - hugind_number_of(ap->val), ap, bp);
}

/* A typed array sorts indices; the elements are read as js_TA_cmp_generic
   reads them. Only arrays whose elements are numbers come here (not BigInt64
   and BigUint64, whose subtraction gives a BigInt, which the sort's caller
   rejects), and a comparator that is not called cannot detach the buffer. */
static inline double hugind_element_of(const struct TA_sort_context *psc, uint32_t idx) {
    const JSObject *p = JS_VALUE_GET_OBJ(psc->arr);
    return hugind_number_of(psc->getfun(psc->ctx, (char *)p->u.array.u.ptr + idx * (size_t)psc->elt_size));
}

/* hugind_slot_order for indices, which are the positions (js_TA_cmp_generic's
   tie-break too). */
static inline int hugind_index_order(double result, uint32_t a, uint32_t b) {
    int sign = (result > 0) - (result < 0);
    return sign != 0 ? sign : (a > b) - (a < b);
}

static int hugind_ta_cmp_left_minus_right(const void *a, const void *b, void *opaque) {
    uint32_t ai = *(const uint32_t *)a, bi = *(const uint32_t *)b;
    return hugind_index_order(hugind_element_of(opaque, ai) - hugind_element_of(opaque, bi), ai, bi);
}

static int hugind_ta_cmp_right_minus_left(const void *a, const void *b, void *opaque) {
    uint32_t ai = *(const uint32_t *)a, bi = *(const uint32_t *)b;
    return hugind_index_order(hugind_element_of(opaque, bi) - hugind_element_of(opaque, ai), ai, bi);
}

static int hugind_ta_holds_numbers(const struct TA_sort_context *psc) {
    JSObject *p = JS_VALUE_GET_OBJ(psc->arr);
    return p->class_id != JS_CLASS_BIG_INT64_ARRAY && p->class_id != JS_CLASS_BIG_UINT64_ARRAY &&
           !typed_array_is_oob(p);
}

/* One instance per comparator, which it calls directly (an indirect call costs
   more under wasm: a table load and a signature check). */
HUGIND_DEFINE_MERGE_SORT(hugind_merge_sort_slots, ValueSlot, hugind_array_cmp)
HUGIND_DEFINE_MERGE_SORT(hugind_merge_sort_left_minus_right, ValueSlot, hugind_cmp_left_minus_right)
HUGIND_DEFINE_MERGE_SORT(hugind_merge_sort_right_minus_left, ValueSlot, hugind_cmp_right_minus_left)
HUGIND_DEFINE_MERGE_SORT(hugind_merge_sort_indices, uint32_t, js_TA_cmp_generic)
HUGIND_DEFINE_MERGE_SORT(hugind_merge_sort_ta_left_minus_right, uint32_t, hugind_ta_cmp_left_minus_right)
HUGIND_DEFINE_MERGE_SORT(hugind_merge_sort_ta_right_minus_left, uint32_t, hugind_ta_cmp_right_minus_left)

static void hugind_sort_slots(ValueSlot *slots, ValueSlot *scratch, size_t n, struct array_sort_context *psc) {
    int kind = psc->has_method ? hugind_numeric_comparator(psc->method) : HUGIND_CMP_CALL;
    if (kind != HUGIND_CMP_CALL && !hugind_all_numbers(slots, n))
        kind = HUGIND_CMP_CALL;
    if (kind == HUGIND_CMP_LEFT_MINUS_RIGHT)
        hugind_merge_sort_left_minus_right(slots, scratch, n, psc);
    else if (kind == HUGIND_CMP_RIGHT_MINUS_LEFT)
        hugind_merge_sort_right_minus_left(slots, scratch, n, psc);
    else
        hugind_merge_sort_slots(slots, scratch, n, psc);
}

static void hugind_sort_indices(uint32_t *indices, uint32_t *scratch, size_t n, struct TA_sort_context *psc) {
    int kind = hugind_numeric_comparator(psc->cmp);
    if (kind != HUGIND_CMP_CALL && !hugind_ta_holds_numbers(psc))
        kind = HUGIND_CMP_CALL;
    if (kind == HUGIND_CMP_LEFT_MINUS_RIGHT)
        hugind_merge_sort_ta_left_minus_right(indices, scratch, n, psc);
    else if (kind == HUGIND_CMP_RIGHT_MINUS_LEFT)
        hugind_merge_sort_ta_right_minus_left(indices, scratch, n, psc);
    else
        hugind_merge_sort_indices(indices, scratch, n, psc);
}

static void hugind_sort(void *base, size_t nmemb, size_t size, cmp_f cmp, void *opaque) {
    /* Both comparison contexts start with the JSContext. */
    JSContext *ctx = *(JSContext **)opaque;
    int slots = cmp == js_array_cmp_generic && size == sizeof(ValueSlot);
    int indices = cmp == js_TA_cmp_generic && size == sizeof(uint32_t);
    void *scratch = NULL;
    if (nmemb < 2)
        return;
    if ((slots || indices) && nmemb <= SIZE_MAX / size)
        scratch = js_malloc_rt(ctx->rt, nmemb * size);
    if (scratch == NULL) {
        rqsort(base, nmemb, size, cmp, opaque);
        return;
    }
    if (slots)
        hugind_sort_slots(base, scratch, nmemb, opaque);
    else
        hugind_sort_indices(base, scratch, nmemb, opaque);
    js_free_rt(ctx->rt, scratch);
}
