/* Bytes between a Uint8Array and a number[] (fs.read_bytes and fs.write_bytes keep
   the number[] of hugind's JS API; the host sends the bytes as base64). Array.from
   and a validating loop cost the interpreter 120-270 ns a byte (4 MB: 0.5-1.6 s);
   these fill or read a fast array's values directly. Included in quickjs_hugind.c
   for the array internals; shim.c puts them on `native`. */

/* native.byteList(Uint8Array) -> a new Array of its bytes. */
JSValue hugind_byte_list(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    size_t len;
    const uint8_t *bytes = JS_GetUint8Array(c, &len, argv[0]);
    if (!bytes)
        return JS_EXCEPTION;
    if (len > INT32_MAX)
        return JS_ThrowRangeError(c, "byteList: more than 2^31-1 bytes");
    JSValue list = JS_NewArray(c);
    if (JS_IsException(list) || len == 0)
        return list;
    JSObject *p = JS_VALUE_GET_OBJ(list);
    if (expand_fast_array(c, p, (uint32_t)len)) {
        JS_FreeValue(c, list);
        return JS_EXCEPTION;
    }
    /* expand_fast_array may run the GC, but the Uint8Array stays reachable from argv */
    for (size_t i = 0; i < len; i++)
        p->u.array.u.values[i] = js_int32(bytes[i]);
    p->u.array.count = (uint32_t)len;
    p->prop[0].u.value = js_int32((int32_t)len);
    return list;
}

/* native.listBytes(list) -> a new Uint8Array of the list's numbers when each is an
   integer 0..255 (-0 as 0, as Uint8Array stores it); null when one is not;
   undefined when the list is not a plain dense array, for the caller's own loop. */
JSValue hugind_list_bytes(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    JSValue *values;
    uint32_t count;
    if (!js_get_fast_array(c, argv[0], &values, &count))
        return JS_UNDEFINED;
    uint8_t *bytes = js_malloc(c, count ? count : 1);
    if (!bytes)
        return JS_EXCEPTION;
    for (uint32_t i = 0; i < count; i++) {
        JSValue v = values[i];
        int32_t tag = JS_VALUE_GET_NORM_TAG(v);
        if (tag == JS_TAG_INT) {
            int32_t n = JS_VALUE_GET_INT(v);
            if (n < 0 || n > 255)
                goto not_bytes;
            bytes[i] = (uint8_t)n;
        } else if (tag == JS_TAG_FLOAT64) {
            double d = JS_VALUE_GET_FLOAT64(v);
            if (!(d >= 0 && d <= 255) || d != (double)(int)d)
                goto not_bytes;
            bytes[i] = (uint8_t)(int)d;
        } else {
            goto not_bytes;
        }
    }
    JSValue out = JS_NewUint8ArrayCopy(c, bytes, count);
    js_free(c, bytes);
    return out;
not_bytes:
    js_free(c, bytes);
    return JS_NULL;
}
