# Included by CMake after each project() of the llama.cpp build (CMAKE_PROJECT_INCLUDE, set in
# .cargo/config.toml). llama-cpp-sys-2 always passes GGML_NATIVE=OFF, which leaves ggml's CPU
# kernels at the features rustc targets. ggml cannot choose between kernel sets at run time in a
# static build, so on a CPU with AVX-512 those would be the AVX2 kernels: Qwen2.5-0.5B's prompt
# pass ran at 0.63x llama.cpp's own build. This turns on ggml's own default for a source build,
# the kernels of the CPU that builds it, unless GGML_HOST_CPU is OFF (config.toml says ON; a
# `GGML_HOST_CPU=OFF` in the environment wins; llama-cpp-sys-2 hands every GGML_* variable to
# CMake). llama-cpp-sys-2 never configures a build directory twice, so the switch takes effect in
# a fresh target directory or after `cargo clean -p llama-cpp-sys-2`.
if(GGML_HOST_CPU)
    set(GGML_NATIVE ON CACHE BOOL "ggml: the kernels of the CPU that builds it" FORCE)
endif()
