# Fails the build when a file under ui/ names another folder in an include ("../tabs/x.h",
# "app/x.h", "tabs/x.h"). Each library of ui/ sees only its own folder and the libraries below
# it, so a header against the arrows of docs/ARCHITECTURE.md is not found; a path with a folder
# in it would get round that, and this check names the line instead.
file(GLOB_RECURSE ui_files "${UI_DIR}/*.h" "${UI_DIR}/*.cpp")
foreach(f IN LISTS ui_files)
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]*/")
    foreach(line IN LISTS lines)
        if(NOT line MATCHES "\"scalelab/core/")
            message(FATAL_ERROR "an include with a folder in ui/ goes round the layers: ${f}: ${line}")
        endif()
    endforeach()
endforeach()
