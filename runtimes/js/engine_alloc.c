/* The memory functions the hugind JS engine gives QuickJS-NG (JS_NewRuntime2):
   the C library's, except that a block that must move when it grows is copied
   with memcpy.

   zig's wasm32 malloc (lib/c/malloc.zig over std.heap.BrkAllocator) keeps
   blocks in power-of-two slots. Its realloc grows a block in place while the
   new size fits the slot, and otherwise allocates a new slot, copies and frees
   the old one; but that copy is a loop of one-byte loads and stores (a profile
   of Array.prototype.sort over 200k numbers under wasmtime put 3.9% of its time
   in that loop, growing the sort's scratch array; native glibc's realloc does
   not show). memcpy compiles to wasm's memory.copy. So here a block whose new
   size needs another slot is moved by malloc + memcpy + free, which is what
   realloc does, in the same order, so memory use is the same; a block that
   stays in its slot, or shrinks, is left to realloc, which does not copy then.

   Which sizes share a slot is zig's rule, mirrored below. If a zig release
   changed it, nothing breaks: a block moved needlessly costs one fast copy,
   and a block left to realloc is copied as before. */

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quickjs.h"

#define HEADER 16u   /* malloc.zig's header: max_align_t's alignment */
#define FREE_WORD 4u /* BrkAllocator's free-list word, a wasm32 pointer */
#define BIGPAGE 65536u

static size_t ceil_pow2(size_t n) {
    size_t p = 1;
    while (p < n && p)
        p <<= 1;
    return p;
}

/* The slot (in bytes, or in 64 KiB pages for big blocks, told apart by the
   flag) that BrkAllocator gives a malloc of `size` bytes; 0 if unknown. */
static size_t slot_of(size_t size, int *big) {
    if (size > SIZE_MAX - 2 * BIGPAGE)
        return 0;
    size_t actual = size + HEADER + FREE_WORD;
    size_t small = ceil_pow2(actual);
    if (small && small < BIGPAGE) {
        *big = 0;
        return small;
    }
    *big = 1;
    return ceil_pow2((actual + BIGPAGE + FREE_WORD - 1) / BIGPAGE);
}

static void *engine_calloc(void *opaque, size_t count, size_t size) {
    (void)opaque;
    return calloc(count, size);
}

static void *engine_malloc(void *opaque, size_t size) {
    (void)opaque;
    return malloc(size);
}

static void engine_free(void *opaque, void *ptr) {
    (void)opaque;
    free(ptr);
}

static void *engine_realloc(void *opaque, void *ptr, size_t size) {
    (void)opaque;
    if (!ptr || !size)
        return realloc(ptr, size);
    size_t old = malloc_usable_size(ptr);
    if (size <= old)
        return realloc(ptr, size);
    int old_big, new_big;
    size_t old_slot = slot_of(old, &old_big), new_slot = slot_of(size, &new_big);
    if (!old_slot || !new_slot || (old_slot == new_slot && old_big == new_big))
        return realloc(ptr, size);
    void *moved = malloc(size);
    if (!moved)
        return NULL;
    memcpy(moved, ptr, old);
    free(ptr);
    return moved;
}

static size_t engine_usable_size(const void *ptr) { return malloc_usable_size((void *)ptr); }

const JSMallocFunctions hugind_malloc_functions = {
    engine_calloc, engine_malloc, engine_free, engine_realloc, engine_usable_size,
};
