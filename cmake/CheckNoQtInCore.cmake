# Fails the build when a core file includes a Qt header. Core is Qt-free by design: it does not
# link Qt, and this check names the offending line instead of leaving a confusing compile error.
file(GLOB_RECURSE core_files "${CORE_DIR}/*.h" "${CORE_DIR}/*.cpp")
foreach(f IN LISTS core_files)
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](Q[A-Za-z]|qt)")
    if(lines)
        message(FATAL_ERROR "core must not include Qt: ${f}: ${lines}")
    endif()
endforeach()
