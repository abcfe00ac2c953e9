# Small wrappers so that every gpuopt library and tool is declared the same way.
#
# The compiler side links the MLIR dylib (libMLIR.so); the runtime side
# (runtime) links nothing but the C++ standard library.

# add_gpuopt_library(name SOURCES... [DEPENDS tgt...] [LINK_LIBS lib...])
function(add_gpuopt_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()
endfunction()

# add_gpuopt_tool(name SOURCES... [LINK_LIBS lib...])
function(add_gpuopt_tool name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS})
  endif()
endfunction()
