# The Debian package, made by CPack from the install rules: `cpack -G DEB` in the build folder
# (scripts/check-deb builds, checks and installs it on a fresh Debian 12 root).
set(SCALELAB_MAINTAINER
    "ScaleLab maintainers <maintainers@users.noreply.a-seed-8545c6e5.example>"
    CACHE STRING "The package's maintainer, as Name <address>")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME scalelab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${SCALELAB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # scalelab_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION education)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the libraries the binary links (dpkg-shlibdeps), never typed by hand. The Qt
# plugins it loads at run time come with those libraries on Debian 12: the xcb and offscreen
# platforms with libqt6gui6, the SVG icon engine with libqt6svg6.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The synopsis, then the long description (CPack indents it, "." is an empty line).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "interactive lessons on training large models at scale")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "ScaleLab turns the bookkeeping of large-model training into lessons moved
with sliders: what one accelerator holds under mixed-precision Adam and
activation checkpointing, how a ring all-reduce and ZeRO share the work of
data parallelism, why a column-then-row split of an MLP is exact, where
pipeline bubbles come from, how a router's choices become all-to-all
traffic, and why FP8 needs fine-grained scales.
.
Every figure comes from one small core, so the window, the JSON report of
`scalelab report` and the images of `scalelab export` always agree.")
# Directories made by the install get the usual 0755, whatever the builder's umask.
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
    GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
include(CPack)
