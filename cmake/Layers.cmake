# hpctrain_layer(NAME SOURCES file... [PUBLIC lib...] [PRIVATE lib...] [TORCH])
# One src/ layer: the library hpctrain_NAME, which exposes src/ to its users,
# builds with our warnings and, with TORCH, against LibTorch's shared
# precompiled header (cmake/Dependencies.cmake).
function(hpctrain_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 LAYER "TORCH" "" "SOURCES;PUBLIC;PRIVATE")
  add_library(hpctrain_${name} ${LAYER_SOURCES})
  target_include_directories(hpctrain_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(hpctrain_${name} PUBLIC ${LAYER_PUBLIC} PRIVATE ${LAYER_PRIVATE} hpctrain_warnings)
  if(LAYER_TORCH)
    hpctrain_use_torch(hpctrain_${name})
  endif()
endfunction()
