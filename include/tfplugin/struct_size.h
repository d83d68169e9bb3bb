/* SPDX-License-Identifier: Apache-2.0 */

/*
 * struct_size discipline for C ABI structs shared between TensorFlow and a plugin.
 *
 * Every ABI struct starts with `size_t struct_size`. The side that fills a struct
 * sets it to the size it was compiled against; the side that reads it checks it
 * before touching any member, because the two sides may come from different
 * releases. Rule: accept a larger struct (newer peer), reject a smaller one.
 *
 * C99, and C++11 or later; macros only, so it is safe in any number of
 * translation units.
 */
#ifndef TFPLUGIN_STRUCT_SIZE_H_
#define TFPLUGIN_STRUCT_SIZE_H_

#include <stddef.h>
#include <string.h>

/*
 * Offset of the first byte after MEMBER in TYPE: the smallest struct_size that
 * still contains MEMBER. Same meaning as TensorFlow's macro, which is defined
 * only if the TensorFlow headers have not defined it already.
 */
#ifndef TF_OFFSET_OF_END
#define TF_OFFSET_OF_END(TYPE, MEMBER) (offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))
#endif

/*
 * Our own spelling of TF_OFFSET_OF_END, so SDK code does not depend on which
 * header defined the TF_ one first.
 */
#define TFP_OFFSET_OF_END(TYPE, MEMBER) (offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))

/*
 * Prepare a struct you are about to fill: zero all of *ptr (unset members read
 * as NULL/0 on the other side) and record SIZE, normally the generated
 * <TYPE>_STRUCT_SIZE constant. A statement; `ptr` is evaluated more than once.
 */
#define TFP_STRUCT_INIT(ptr, SIZE)   \
  do {                               \
    memset((ptr), 0, sizeof *(ptr)); \
    (ptr)->struct_size = (SIZE);     \
  } while (0)

/*
 * Nonzero iff `ptr` is non-NULL and the struct the other side filled is large
 * enough to contain MEMBER. Use it before reading any member that was added
 * after the first release of TYPE; an older peer sends a smaller struct.
 */
#define TFP_HAS_FIELD(ptr, TYPE, MEMBER) \
  ((ptr) != NULL && (ptr)->struct_size >= TFP_OFFSET_OF_END(TYPE, MEMBER))

/*
 * Nonzero (an error) when the struct_size received is 0 (the caller forgot to
 * set it) or too small to contain LAST_MEMBER, the last member this side needs.
 * A larger struct_size is accepted: a newer peer appends members we ignore.
 */
#define TFP_STRUCT_SIZE_CHECK(ptr, TYPE, LAST_MEMBER) \
  ((ptr)->struct_size == 0 || (ptr)->struct_size < TFP_OFFSET_OF_END(TYPE, LAST_MEMBER))

/* Token pasting that expands its arguments first (needed for __LINE__). */
#define TFP_CAT_(a, b) TFP_CAT_IMPL_(a, b)
#define TFP_CAT_IMPL_(a, b) a##b

/*
 * TFP_STATIC_ASSERT_(cond, name, text): the one implementation every static
 * assertion below uses. `text` is the diagnostic for C11/C++11; `name` prefixes
 * the typedef of the C99 fallback, whose error names the negative-size array.
 */
#if (defined(__cplusplus) && __cplusplus >= 201103L) || \
    (defined(_MSVC_LANG) && _MSVC_LANG >= 201103L)
#define TFP_STATIC_ASSERT_(cond, name, text) static_assert(cond, text)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define TFP_STATIC_ASSERT_(cond, name, text) _Static_assert(cond, text)
#else
/* Unused at block scope by design; keep -Wunused-local-typedefs quiet. */
#if defined(__GNUC__) || defined(__clang__)
#define TFP_UNUSED_TYPEDEF_ __attribute__((__unused__))
#else
#define TFP_UNUSED_TYPEDEF_
#endif
/* __COUNTER__ keeps names unique when two headers assert on the same line. */
#if defined(__COUNTER__)
#define TFP_UNIQUE_(name) TFP_CAT_(TFP_CAT_(name, __LINE__), TFP_CAT_(_, __COUNTER__))
#else
#define TFP_UNIQUE_(name) TFP_CAT_(name, __LINE__)
#endif
#define TFP_STATIC_ASSERT_(cond, name, text) \
  typedef char TFP_UNIQUE_(name)[(cond) ? 1 : -1] TFP_UNUSED_TYPEDEF_
#endif

/*
 * Compile-time assertion, usable at file and block scope; end it with `;`.
 * msg_identifier is a C identifier that appears in the compiler's error
 * (C11/C++11 static_assert where available, else a negative-size array).
 */
#define TFP_STATIC_ASSERT(cond, msg_identifier) \
  TFP_STATIC_ASSERT_(cond, tfp_static_assert_##msg_identifier##_L, #msg_identifier)

/*
 * Pin the offset of MEMBER in TYPE. Generated ABI headers use this so a layout
 * difference is a compile error, not silent memory corruption at run time.
 */
#define TFP_ASSERT_OFFSET(TYPE, MEMBER, OFFSET)                               \
  TFP_STATIC_ASSERT_(offsetof(TYPE, MEMBER) == (OFFSET), tfp_assert_offset_L, \
                     "TFP_ASSERT_OFFSET(" #TYPE ", " #MEMBER ", " #OFFSET ")")

/* Pin sizeof(TYPE), which includes any tail padding. */
#define TFP_ASSERT_SIZE(TYPE, SIZE)                             \
  TFP_STATIC_ASSERT_(sizeof(TYPE) == (SIZE), tfp_assert_size_L, \
                     "TFP_ASSERT_SIZE(" #TYPE ", " #SIZE ")")

/*
 * Pin both the offset and the size of MEMBER in TYPE: a member whose type
 * changes width must fail even when its offset does not move.
 */
#define TFP_ASSERT_FIELD(TYPE, MEMBER, OFFSET, SIZE)                                              \
  TFP_STATIC_ASSERT_(offsetof(TYPE, MEMBER) == (OFFSET) && sizeof(((TYPE *)0)->MEMBER) == (SIZE), \
                     tfp_assert_field_L,                                                          \
                     "TFP_ASSERT_FIELD(" #TYPE ", " #MEMBER ", " #OFFSET ", " #SIZE ")")

#endif /* TFPLUGIN_STRUCT_SIZE_H_ */
