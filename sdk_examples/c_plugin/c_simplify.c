/* A pass plugin in plain C99: algebraic identities.
 *
 *   x * 1, 1 * x   -> x     (operator.mul, torch.mul)
 *   x + 0, 0 + x   -> x     (operator.add, torch.add)
 *   x - 0          -> x     (operator.sub, torch.sub)
 *
 * Every node whose value is one of its inputs unchanged is removed: its
 * users read the input instead. Only the C header (fx/plugin_api.h) is
 * used: handles, status objects, and the function table the host passes. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fx/plugin_api.h"

/* Whether `arg` is the number `value` (an int or a float). */
static int is_number(const FxApi* api, const FxArg* arg, double value) {
  FxArgKind kind = api->ArgKind(arg);
  if (kind == FX_ARG_INT) {
    int64_t v = 0;
    FxStatus* s = api->ArgGetInt(arg, &v);
    if (s != NULL) {
      api->ReleaseStatus(s);
      return 0;
    }
    return (double)v == value;
  }
  if (kind == FX_ARG_FLOAT) {
    double v = 0;
    FxStatus* s = api->ArgGetFloat(arg, &v);
    if (s != NULL) {
      api->ReleaseStatus(s);
      return 0;
    }
    return v == value;
  }
  return 0;
}

/* The input a node passes through unchanged, or NULL. */
static FxNode* identity_input(const FxApi* api, FxNode* node) {
  const char* target;
  const FxArg* a;
  const FxArg* b;
  FxNode* input = NULL;
  int is_mul, is_add, is_sub;
  if (api->NodeOp(node) != FX_OP_CALL_FUNCTION) return NULL;
  if (api->NodeNumArgs(node) != 2 || api->NodeNumKwargs(node) != 0) {
    return NULL;
  }
  target = api->NodeTarget(node);
  is_mul = !strcmp(target, "operator.mul") || !strcmp(target, "torch.mul");
  is_add = !strcmp(target, "operator.add") || !strcmp(target, "torch.add");
  is_sub = !strcmp(target, "operator.sub") || !strcmp(target, "torch.sub");
  if (!is_mul && !is_add && !is_sub) return NULL;
  a = api->NodeArg(node, 0);
  b = api->NodeArg(node, 1);
  if (api->ArgKind(a) == FX_ARG_NODE && is_number(api, b, is_mul ? 1.0 : 0.0)) {
    FxStatus* s = api->ArgGetNode(a, &input);
    if (s != NULL) api->ReleaseStatus(s);
    return input;
  }
  if (!is_sub && api->ArgKind(b) == FX_ARG_NODE &&
      is_number(api, a, is_mul ? 1.0 : 0.0)) {
    FxStatus* s = api->ArgGetNode(b, &input);
    if (s != NULL) api->ReleaseStatus(s);
    return input;
  }
  return NULL;
}

static FxStatus* simplify(const FxApi* api, FxGraph* graph,
                          const FxOptions* options, void* user_data,
                          int* changed) {
  FxNode* node = api->GraphFirstNode(graph);
  int removed = 0;
  (void)options;
  (void)user_data;
  while (node != NULL) {
    FxNode* next = api->NodeNext(node);
    FxNode* input = identity_input(api, node);
    if (input != NULL) {
      FxStatus* s = api->NodeReplaceAllUsesWith(node, input, NULL);
      if (s == NULL) s = api->GraphEraseNode(graph, node);
      if (s != NULL) return s;
      ++removed;
    }
    node = next;
  }
  *changed = removed > 0;
  return NULL;
}

static const FxPassInfo kPasses[] = {
    {"c_simplify",
     "x * 1, x + 0, x - 0 -> x (a plugin in plain C)",
     NULL,
     0,
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     {NULL, 0},
     simplify,
     NULL,
     {0, 0}, /* tolerance: none declared (the numbers stay exact) */
     1}};    /* idempotent: a second run finds nothing to simplify */

static const FxPluginInfo kPlugin = {
    "c_simplify",      "1.0", FX_API_VERSION, FX_API_VERSION,
    kPasses,           1,     NULL,           sizeof(FxPluginInfo),
    sizeof(FxPassInfo)};

FX_PLUGIN_EXPORT const FxPluginInfo* fx_plugin_get_info(void) {
  return &kPlugin;
}
