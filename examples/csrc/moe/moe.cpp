// moe: CPU kernel (a loop over experts in ATen ops); the declaration in opgen_examples/ops/moe.py
// registers it. The CUDA kernels are in moe_cuda.cu.
//
// y[t] = sum over the top_k experts e of token t of p[t, e] * (gelu_tanh(x[t] @ w1[e]^T) @ w2[e]^T),
// where the router logits are x @ gate_weight^T (in float32, float64 for float64 inputs) and p is the
// softmax over the token's top_k logits. Forward only.
#include "common/use_aten.h"  // on the full ATen API: see docs/index.md for why

#include <ATen/core/Tensor.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/zeros.h>

#include "common/checks.h"
#include "moe/moe.h"

namespace examples::moe {

Sizes check_inputs(const at::Tensor& x, const at::Tensor& gate_weight, const at::Tensor& w1, const at::Tensor& w2,
                   int64_t top_k) {
  opgen::check_floating(x, "x");
  opgen::check_same_dtype(gate_weight, "gate_weight", x, "x");
  opgen::check_same_dtype(w1, "w1", x, "x");
  opgen::check_same_dtype(w2, "w2", x, "x");
  opgen::check_same_device(gate_weight, "gate_weight", x, "x");
  opgen::check_same_device(w1, "w1", x, "x");
  opgen::check_same_device(w2, "w2", x, "x");
  TORCH_CHECK(x.dim() == 2, "x must have 2 dimensions (tokens, hidden), got shape ", x.sizes());
  TORCH_CHECK(gate_weight.dim() == 2, "gate_weight must have 2 dimensions (experts, hidden), got shape ",
              gate_weight.sizes());
  TORCH_CHECK(w1.dim() == 3, "w1 must have 3 dimensions (experts, ffn, hidden), got shape ", w1.sizes());
  TORCH_CHECK(w2.dim() == 3, "w2 must have 3 dimensions (experts, hidden, ffn), got shape ", w2.sizes());
  const Sizes s{x.size(0), x.size(1), gate_weight.size(0), w1.size(1)};
  TORCH_CHECK(gate_weight.size(1) == s.hidden, "gate_weight must have shape (experts, ", s.hidden,
              ") to match x's hidden size, got ", gate_weight.sizes());
  TORCH_CHECK(s.experts >= 1, "gate_weight must have at least one expert (row), got shape ", gate_weight.sizes());
  TORCH_CHECK(w1.size(0) == s.experts && w1.size(2) == s.hidden, "w1 must have shape (", s.experts, ", ffn, ",
              s.hidden, ") = (experts, ffn, hidden), got ", w1.sizes());
  TORCH_CHECK(w2.size(0) == s.experts && w2.size(1) == s.hidden && w2.size(2) == s.ffn, "w2 must have shape (",
              s.experts, ", ", s.hidden, ", ", s.ffn, ") = (experts, hidden, ffn) to match w1, got ", w2.sizes());
  TORCH_CHECK(top_k >= 1 && top_k <= s.experts, "top_k must be between 1 and the number of experts (", s.experts,
              "), got ", top_k);
  return s;
}

at::Tensor forward_cpu(const at::Tensor& x, const at::Tensor& gate_weight, const at::Tensor& w1, const at::Tensor& w2,
                       int64_t top_k) {
  const Sizes s = check_inputs(x, gate_weight, w1, w2, top_k);
  const at::ScalarType acc = router_dtype(x.scalar_type());
  const at::Tensor logits = at::mm(x.to(acc), gate_weight.to(acc).t());
  const auto [top_logits, top_experts] = at::topk(logits, top_k, /*dim=*/-1);
  const at::Tensor weights = at::softmax(top_logits, /*dim=*/-1);

  // Sum each token's top_k expert outputs in the router's precision, round once at the end.
  at::Tensor y = at::zeros({s.tokens, s.hidden}, x.options().dtype(acc));
  for (int64_t e = 0; e < s.experts; ++e) {
    const at::Tensor routed = at::nonzero(top_experts.eq(e));  // (n, 2): token, slot
    if (routed.size(0) == 0) {
      continue;
    }
    const at::Tensor tokens = routed.select(1, 0);
    const at::Tensor h = at::gelu(at::mm(x.index_select(0, tokens), w1[e].t()), "tanh");
    const at::Tensor out = at::mm(h, w2[e].t()).to(acc);
    const at::Tensor p = weights.view(-1).index_select(0, tokens.mul(top_k).add(routed.select(1, 1))).unsqueeze(1);
    y.index_add_(0, tokens, out.mul(p));
  }
  return y.to(x.scalar_type());
}

}  // namespace examples::moe
