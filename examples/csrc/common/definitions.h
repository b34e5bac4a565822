// Op schemas with their tags (torch.Tag), registered as a fragment of the namespace's library:
//
//   OPGEN_DEFINITIONS(examples, m) {
//     m.def("scale(Tensor x, float alpha) -> Tensor", {opgen::Tag::pt2_compliant});
//   }
//
// The derived registrations use it with the tags an op's declaration gives (_opgen/model.py).
// Under the stable ABI, tags reach the dispatcher through torch_library_def_with_tags, which torch's
// stable C shim has from 2.12 on. The build targets an older torch (MIN_STABLE_TORCH), so the
// function is a weak reference: one binary tags its ops under every torch that can take tags, and
// registers them untagged under one that cannot.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "common/torch_api.h"

namespace examples::opgen {

// The tags opgen derives from a declaration (torch.Tag.<name>).
enum class Tag {
  pt2_compliant,             // pt2_compliant_tag: passes opcheck and compiles (the suite checks both)
  nondeterministic_bitwise,  // two runs on the same inputs may differ in their bits
  cudagraph_unsafe,          // cannot be captured in a CUDA graph
};

}  // namespace examples::opgen

#if defined(OPGEN_STABLE_API) && defined(__ELF__)
#define OPGEN_TAGS_BY_WEAK_REFERENCE
extern "C" {
// From torch/csrc/stable/c/shim.h (torch >= 2.12); null where the running torch lacks them.
__attribute__((weak)) AOTITorchError torch_library_def_with_tags(TorchLibraryHandle self, const char* schema,
                                                                 const int32_t* tags, int32_t num_tags);
__attribute__((weak)) int32_t torch_tag_pt2_compliant_tag();
__attribute__((weak)) int32_t torch_tag_nondeterministic_bitwise();
__attribute__((weak)) int32_t torch_tag_cudagraph_unsafe();
}
#endif

namespace examples::opgen {
// One binary may hold sources of both APIs (a "stable" project's use_aten.h opt-ins): each API's
// class has a name of its own, or the linker would keep one class's code for both layouts.
#ifdef OPGEN_STABLE_API
inline namespace stable_api {
#else
inline namespace aten_api {
#endif

class Definitions final {
 public:
  using Init = void(Definitions&);

  Definitions(Init* init, const char* ns, const char* file, uint32_t line)
#ifdef OPGEN_STABLE_API
  {
    OPGEN_CHECK(aoti_torch_library_init_fragment(ns, file, line, &library_) == AOTI_TORCH_SUCCESS,
                "could not open a library fragment of namespace ", ns);
    init(*this);
  }
  ~Definitions() {
    aoti_torch_delete_library_object(library_);
  }
#else
      : library_(torch::Library::FRAGMENT, ns, std::nullopt, file, line) {
    init(*this);
  }
#endif
  Definitions(const Definitions&) = delete;
  Definitions& operator=(const Definitions&) = delete;

  // True where the running torch registers tags (the full ATen API always does).
  static bool takes_tags() {
#if defined(OPGEN_TAGS_BY_WEAK_REFERENCE)
    return torch_library_def_with_tags != nullptr;
#elif defined(OPGEN_STABLE_API)
    return false;
#else
    return true;
#endif
  }

  Definitions& def(const char* schema, std::initializer_list<Tag> tags = {}) {
#ifdef OPGEN_STABLE_API
    if (tags.size() == 0 || !takes_tags()) {
      OPGEN_CHECK(aoti_torch_library_def(library_, schema) == AOTI_TORCH_SUCCESS, "could not define ", schema);
      return *this;
    }
#ifdef OPGEN_TAGS_BY_WEAK_REFERENCE
    std::vector<int32_t> ids;
    for (Tag tag : tags) {
      ids.push_back(tag == Tag::pt2_compliant              ? torch_tag_pt2_compliant_tag()
                    : tag == Tag::nondeterministic_bitwise ? torch_tag_nondeterministic_bitwise()
                                                           : torch_tag_cudagraph_unsafe());
    }
    OPGEN_CHECK(torch_library_def_with_tags(library_, schema, ids.data(), static_cast<int32_t>(ids.size())) ==
                    AOTI_TORCH_SUCCESS,
                "could not define ", schema);
#endif
#else
    std::vector<at::Tag> aten_tags;
    for (Tag tag : tags) {
      aten_tags.push_back(tag == Tag::pt2_compliant              ? at::Tag::pt2_compliant_tag
                          : tag == Tag::nondeterministic_bitwise ? at::Tag::nondeterministic_bitwise
                                                                 : at::Tag::cudagraph_unsafe);
    }
    library_.def(schema, static_cast<const std::vector<at::Tag>&>(aten_tags));  // (not def's kernel overload)
#endif
    return *this;
  }

 private:
#ifdef OPGEN_STABLE_API
  TorchLibraryHandle library_ = nullptr;
#else
  torch::Library library_;
#endif
};

}  // namespace stable_api or aten_api
}  // namespace examples::opgen

#define OPGEN_DEFINITIONS_CONCAT_(a, b) a##b
#define OPGEN_DEFINITIONS_CONCAT(a, b) OPGEN_DEFINITIONS_CONCAT_(a, b)
// A block of m.def(schema, {tags}) calls, run when the extension loads (one per source file).
#define OPGEN_DEFINITIONS(ns, m)                                                                            \
  static void OPGEN_DEFINITIONS_CONCAT(opgen_definitions_, __LINE__)(OPGEN_NAMESPACE::Definitions&);        \
  static const OPGEN_NAMESPACE::Definitions OPGEN_DEFINITIONS_CONCAT(opgen_definitions_library_, __LINE__)( \
      &OPGEN_DEFINITIONS_CONCAT(opgen_definitions_, __LINE__), #ns, __FILE__, __LINE__);                    \
  void OPGEN_DEFINITIONS_CONCAT(opgen_definitions_, __LINE__)(OPGEN_NAMESPACE::Definitions & m)
