# hpctrain_layer(NAME SOURCES file... [PUBLIC lib...] [PRIVATE lib...] [TORCH])
# One src/ layer: the library hpctrain_NAME, which exposes src/ to its users,
# builds with our warnings and, with TORCH, against LibTorch's shared
# precompiled header (cmake/Dependencies.cmake); every layer is a unity build.
#
# Unity build (HPCTRAIN_UNITY_BUILD): a layer's sources compile in batches of
# HPCTRAIN_UNITY_BATCH, each batch one translation unit. Every translation
# unit parses its own copy of the heavy headers (toml++, fmt, spdlog, CLI11,
# nlohmann/json) or loads LibTorch's precompiled header, and compiles its own
# copy of their inline code (Tensor operators, format and parse functions); a
# batch does that once for several sources (8: docs/architecture.md has the
# build times that chose it). Sources with their own compile
# options (the -O3 kernels) stay separate translation units. The lint
# (.ci/lint) checks each source on its own all the same: it turns the batches
# back into per-source compile commands.
set(HPCTRAIN_UNITY_BATCH 8 CACHE STRING "Sources per translation unit in a layer's unity build")
function(hpctrain_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 LAYER "TORCH" "" "SOURCES;PUBLIC;PRIVATE")
  add_library(hpctrain_${name} ${LAYER_SOURCES})
  target_include_directories(hpctrain_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(hpctrain_${name} PUBLIC ${LAYER_PUBLIC} PRIVATE ${LAYER_PRIVATE} hpctrain_warnings)
  if(LAYER_TORCH)
    hpctrain_use_torch(hpctrain_${name})
  endif()
  set_target_properties(hpctrain_${name} PROPERTIES UNITY_BUILD ${HPCTRAIN_UNITY_BUILD}
                                                    UNITY_BUILD_BATCH_SIZE ${HPCTRAIN_UNITY_BATCH})
endfunction()
