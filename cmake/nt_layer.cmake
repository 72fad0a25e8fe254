# nt_layer(NAME dep...): one static library per folder of src/, built from every .cpp in it.
# Files named *_avx2.cpp / *_avx512.cpp are compiled for that ISA only; callers must dispatch at
# run time (see src/kernels/cpu_features.h) and never call them on a CPU that lacks the ISA.
function(nt_layer name)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  foreach(f ${srcs})
    if(f MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2")
    elseif(f MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${f} PROPERTIES COMPILE_OPTIONS
        "-mavx2;-mfma;-mf16c;-mbmi2;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx512vbmi;-mgfni")
    endif()
  endforeach()
  if(srcs)
    add_library(nt_${name} STATIC ${srcs})
    target_include_directories(nt_${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(nt_${name} PUBLIC ${ARGN})
  else()
    add_library(nt_${name} INTERFACE)
    target_include_directories(nt_${name} INTERFACE ${CMAKE_SOURCE_DIR}/src)
    target_link_libraries(nt_${name} INTERFACE ${ARGN})
  endif()
endfunction()
