#ifndef DQS_XS_KEYWORDS_H
#define DQS_XS_KEYWORDS_H

#include "ops.h"

#ifdef HAVE_XS_PARSE_KEYWORD
/*
 * The keyword API: `q_int_push $q, $v`, `q_int_pop $q`, `q_int_peek $q`,
 * `q_int_size $q`, and the same for int32, int16 and str. XS::Parse::Keyword
 * parses them; each compiles to a custom op (a UNOP or BINOP over the
 * argument expressions) whose pp function checks the invocant and makes the
 * C ABI call itself: no method lookup, no entersub, no call frame. The
 * checks, conversions, results and croak texts are the methods' (with the
 * keyword's name where the method's would be), in the same order: the
 * invocant's get-magic (as the method call does), the value, then the handle.
 *
 * A keyword is enabled where `$^H{"Data::Queue::Shared::<Class>/keywords"}`
 * exists: `use Data::Queue::Shared::<Class>` sets it for the lexical scope
 * being compiled, `no ...` deletes it.
 */
#include "XSParseKeyword.h"

/* One pp function per keyword, so the class is a constant in each. */
#define KW_TARG PAD_SV(PL_op->op_targ)
#define INT_KW_PP(tag, IX)                                                                         \
    static OP *pp_q_##tag##_push(pTHX) { return op_int_push(aTHX_ IX, NULL, "q_" #tag "_push"); } \
    static OP *pp_q_##tag##_pop(pTHX)                                                              \
    { return op_int_pop(aTHX_ IX, 0, NULL, "q_" #tag "_pop", KW_TARG); }                           \
    static OP *pp_q_##tag##_peek(pTHX)                                                             \
    { return op_int_pop(aTHX_ IX, 1, NULL, "q_" #tag "_peek", KW_TARG); }                          \
    static OP *pp_q_##tag##_size(pTHX) { return op_size(aTHX_ IX, NULL, "q_" #tag "_size", KW_TARG); }
INT_KW_PP(int, 0)
INT_KW_PP(int32, 1)
INT_KW_PP(int16, 2)
static OP *pp_q_str_push(pTHX) { return op_str_push(aTHX_ 0, NULL, "q_str_push"); }
static OP *pp_q_str_pop(pTHX) { return op_str_pop(aTHX_ 0, 0, NULL, "q_str_pop", KW_TARG); }
static OP *pp_q_str_peek(pTHX) { return op_str_pop(aTHX_ 0, 1, NULL, "q_str_peek", KW_TARG); }
static OP *pp_q_str_size(pTHX) { return op_size(aTHX_ CLASS_STR, NULL, "q_str_size", KW_TARG); }

struct dqs_keyword {
    const char *name;
    OP *(*pp)(pTHX);
    int ix;     /* class */
    int binary; /* push: invocant and value; the others: invocant only */
    XOP xop;
};

#define KW(tag, IX, op, bin) { "q_" #tag "_" #op, pp_q_##tag##_##op, IX, bin, { 0 } }
static struct dqs_keyword keywords[] = {
    KW(int, 0, push, 1),   KW(int, 0, pop, 0),   KW(int, 0, peek, 0),   KW(int, 0, size, 0),
    KW(int32, 1, push, 1), KW(int32, 1, pop, 0), KW(int32, 1, peek, 0), KW(int32, 1, size, 0),
    KW(int16, 2, push, 1), KW(int16, 2, pop, 0), KW(int16, 2, peek, 0), KW(int16, 2, size, 0),
    KW(str, 3, push, 1),   KW(str, 3, pop, 0),   KW(str, 3, peek, 0),   KW(str, 3, size, 0),
};
#undef KW

static int
kw_build(pTHX_ OP **out, XSParseKeywordPiece *args[], size_t nargs, void *hookdata)
{
    const struct dqs_keyword *k = (const struct dqs_keyword *)hookdata;
    OP *o;
    PERL_UNUSED_ARG(nargs);
    if (k->binary) {
        o = newBINOP(OP_CUSTOM, 0, op_contextualize(args[0]->op, G_SCALAR),
                     op_contextualize(args[1]->op, G_SCALAR));
    }
    else {
        o = newUNOP(OP_CUSTOM, 0, op_contextualize(args[0]->op, G_SCALAR));
        o->op_targ = pad_alloc(OP_CUSTOM, SVs_PADTMP);
    }
    o->op_ppaddr = k->pp;
    *out = o;
    return KEYWORD_PLUGIN_EXPR;
}

/* Parentheses are optional. The operand of the one-argument keywords is
 * parsed like that of a named unary operator (`q_int_pop $q || last` is
 * `(q_int_pop $q) || last`); push takes two comma-separated terms like a
 * list operator (`q_int_push $q, $v or warn` pushes $v). */
static const struct XSParseKeywordPieceType unary_pieces[] = {
    XPK_ARGSCOPE(XPK_ARITHEXPR), { 0 }
};
static const struct XSParseKeywordPieceType binary_pieces[] = {
    XPK_ARGSCOPE(XPK_TERMEXPR, XPK_COMMA, XPK_TERMEXPR), { 0 }
};

#define HOOKS(cls, pieces_)                                                                        \
    { .flags = XPK_FLAG_EXPR, .pieces = pieces_,                                                   \
      .permit_hintkey = "Data::Queue::Shared::" cls "/keywords", .build = kw_build }
static const struct XSParseKeywordHooks kw_hooks[4][2] = {
    { HOOKS("Int", unary_pieces), HOOKS("Int", binary_pieces) },
    { HOOKS("Int32", unary_pieces), HOOKS("Int32", binary_pieces) },
    { HOOKS("Int16", unary_pieces), HOOKS("Int16", binary_pieces) },
    { HOOKS("Str", unary_pieces), HOOKS("Str", binary_pieces) },
};
#undef HOOKS

static void
register_keywords(pTHX)
{
    size_t i;
    boot_xs_parse_keyword(0.33);
    for (i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
        struct dqs_keyword *k = &keywords[i];
        XopENTRY_set(&k->xop, xop_name, k->name);
        XopENTRY_set(&k->xop, xop_desc, k->name);
        XopENTRY_set(&k->xop, xop_class, k->binary ? OA_BINOP : OA_UNOP);
        Perl_custom_op_register(aTHX_ k->pp, &k->xop);
        register_xs_parse_keyword(k->name, &kw_hooks[k->ix][k->binary], k);
    }
}
#define HAVE_KEYWORDS 1
#else
#define HAVE_KEYWORDS 0
#endif /* HAVE_XS_PARSE_KEYWORD */

#endif /* DQS_XS_KEYWORDS_H */
