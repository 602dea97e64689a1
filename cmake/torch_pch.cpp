// Anchors the shared LibTorch precompiled header (see cmake/Dependencies.cmake).
