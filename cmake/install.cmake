# Install rules and packaging (SIMDBLOOM_INSTALL): the libraries, the header, pkg-config and CMake
# package files, the command and its man page; `cpack -G DEB` builds Debian packages of them,
# split the Debian way (install components in brackets):
#   libsimdbloom1           the shared library                      [runtime]
#   libsimdbloom-dev        header, static library, .so link, pkg-config, CMake package  [dev]
#   simdbloom               the command and its man page            [programs]
#   libsimdbloom-redis1     the fleet filter's shared library       [redisruntime]
#   libsimdbloom-redis-dev  its header, static library, .so link, pkg-config, CMake package
#                           [redisdev]
include(CMakePackageConfigHelpers)

set(SIMDBLOOM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/simdbloom)
if(simdbloom_installed_targets)
  install(TARGETS ${simdbloom_installed_targets} EXPORT simdbloomTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  install(EXPORT simdbloomTargets NAMESPACE simdbloom:: DESTINATION ${SIMDBLOOM_CMAKE_DIR}
    COMPONENT dev)
endif()
install(FILES include/simdbloom.h include/simdbloom_inline.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
# libsimdbloom-redis, where hiredis was found: its libraries (an export set of its own, which
# simdbloomConfig.cmake includes where installed: simdbloom::simdbloom_redis), its header and
# simdbloom-redis.pc.
if(simdbloom_redis)
  set(simdbloom_redis_installed "")
  if(SIMDBLOOM_BUILD_SHARED)
    list(APPEND simdbloom_redis_installed simdbloom_redis_shared)
  endif()
  if(SIMDBLOOM_BUILD_STATIC)
    list(APPEND simdbloom_redis_installed simdbloom_redis_static)
  endif()
  if(simdbloom_redis_installed)
    install(TARGETS ${simdbloom_redis_installed} EXPORT simdbloomRedisTargets
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT redisruntime
        NAMELINK_COMPONENT redisdev
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT redisdev)
    install(EXPORT simdbloomRedisTargets NAMESPACE simdbloom:: DESTINATION ${SIMDBLOOM_CMAKE_DIR}
      COMPONENT redisdev)
  endif()
  install(FILES include/simdbloom_redis.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT redisdev)
endif()

configure_package_config_file(cmake/simdbloomConfig.cmake.in
  ${PROJECT_BINARY_DIR}/simdbloomConfig.cmake INSTALL_DESTINATION ${SIMDBLOOM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/simdbloomConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/simdbloomConfig.cmake
  ${PROJECT_BINARY_DIR}/simdbloomConfigVersion.cmake DESTINATION ${SIMDBLOOM_CMAKE_DIR}
  COMPONENT dev)

# pkg-config: -lm is private (the shared library records it itself; a static link needs it).
# The file finds the prefix from its own place (${pcfiledir}), so an installed tree can move
# (cmake --install --prefix, a staging root).
file(RELATIVE_PATH SIMDBLOOM_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" SIMDBLOOM_PC_TO_PREFIX "${SIMDBLOOM_PC_TO_PREFIX}")
set(SIMDBLOOM_PC_PREFIX "\${pcfiledir}/${SIMDBLOOM_PC_TO_PREFIX}")
set(SIMDBLOOM_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
set(SIMDBLOOM_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(SIMDBLOOM_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(SIMDBLOOM_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(cmake/simdbloom.pc.in ${PROJECT_BINARY_DIR}/simdbloom.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/simdbloom.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT dev)
if(simdbloom_redis)
  configure_file(cmake/simdbloom-redis.pc.in ${PROJECT_BINARY_DIR}/simdbloom-redis.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/simdbloom-redis.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT redisdev)
endif()

# The man page as Debian ships man pages: compressed (gzip -9n: no name or time in it, so the
# same page always gives the same bytes).
set(SIMDBLOOM_MAN_GZ ${PROJECT_BINARY_DIR}/debian/simdbloom.1.gz)
if(SIMDBLOOM_BUILD_PROGRAMS)
  add_custom_command(OUTPUT ${SIMDBLOOM_MAN_GZ}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/debian
    COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/docs/simdbloom.1 > ${SIMDBLOOM_MAN_GZ}
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/simdbloom.1 VERBATIM)
  add_custom_target(simdbloom_man_page ALL DEPENDS ${SIMDBLOOM_MAN_GZ})
  install(TARGETS simdbloom-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT programs)
  install(FILES ${SIMDBLOOM_MAN_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT programs)
endif()

# ---- Debian packages (cpack -G DEB) ----
set(simdbloom_deb_version ${PROJECT_VERSION})
configure_file(cmake/debian/changelog.in ${PROJECT_BINARY_DIR}/debian/changelog @ONLY)
execute_process(COMMAND gzip -9n -c ${PROJECT_BINARY_DIR}/debian/changelog
  OUTPUT_FILE ${PROJECT_BINARY_DIR}/debian/changelog.gz)
set(simdbloom_deb_components runtime dev)
if(SIMDBLOOM_BUILD_PROGRAMS)
  list(APPEND simdbloom_deb_components programs)
endif()
if(simdbloom_redis)
  list(APPEND simdbloom_deb_components redisruntime redisdev)
endif()
set(simdbloom_deb_runtime libsimdbloom${PROJECT_VERSION_MAJOR})
set(simdbloom_deb_dev libsimdbloom-dev)
set(simdbloom_deb_programs simdbloom)
set(simdbloom_deb_redisruntime libsimdbloom-redis${PROJECT_VERSION_MAJOR})
set(simdbloom_deb_redisdev libsimdbloom-redis-dev)
foreach(component IN LISTS simdbloom_deb_components)
  set(package ${simdbloom_deb_${component}})
  string(TOUPPER ${component} COMPONENT)
  install(FILES cmake/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog.gz
    DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
  set(CPACK_DEBIAN_${COMPONENT}_PACKAGE_NAME ${package})
  set(CPACK_DEBIAN_${COMPONENT}_FILE_NAME DEB-DEFAULT)
endforeach()

set(CPACK_PACKAGE_NAME simdbloom)
set(CPACK_PACKAGE_VENDOR simdbloom)
set(CPACK_PACKAGE_CONTACT "simdbloom maintainers <maintainers@simdbloom.org>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_HOMEPAGE_URL "https://simdbloom.org")
# Each package's own summary is the first line of its description below; CPack prepends the
# project-wide summary unless it is CPack's default, so that default it is.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${simdbloom_deb_components})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# The libraries' packages register them with ldconfig by trigger (as Debian's own do, instead of
# maintainer scripts) and say which package provides each SONAME (shlibs).
foreach(lib simdbloom simdbloom-redis)
  file(WRITE ${PROJECT_BINARY_DIR}/debian/${lib}/shlibs
    "lib${lib} ${PROJECT_VERSION_MAJOR} lib${lib}${PROJECT_VERSION_MAJOR} (>= ${PROJECT_VERSION})\n")
  configure_file(cmake/debian/triggers ${PROJECT_BINARY_DIR}/debian/${lib}/triggers COPYONLY)
endforeach()
set(simdbloom_deb_same "(= ${PROJECT_VERSION})")
# Descriptions: a summary line, then the extended text (lines under 80 characters).
set(simdbloom_deb_about
  "simdbloom answers 'have I seen this key before?' for hundreds of millions of
keys a second: blocked Bloom filters (Parquet bit-exact; 512-bit blocks with 8
or 16 bits a key; counting) with AVX2, AVX-512 and NEON kernels chosen at run
time, exact sizing, crash-safe files and shared mappings.")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libc6 (>= 2.34)")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
  ${PROJECT_BINARY_DIR}/debian/simdbloom/shlibs ${PROJECT_BINARY_DIR}/debian/simdbloom/triggers)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "fast blocked Bloom filters (shared library)
${simdbloom_deb_about}

This package holds the shared library.")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${simdbloom_deb_runtime} ${simdbloom_deb_same}")
set(CPACK_DEBIAN_DEV_DESCRIPTION "fast blocked Bloom filters (development files)
${simdbloom_deb_about}

This package holds the header, the static library, and the pkg-config and
CMake package files.")
set(CPACK_DEBIAN_PROGRAMS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PROGRAMS_PACKAGE_DEPENDS "libc6 (>= 2.34)")
if(simdbloom_redis)
  set(CPACK_DEBIAN_PROGRAMS_PACKAGE_DEPENDS "${CPACK_DEBIAN_PROGRAMS_PACKAGE_DEPENDS}, libhiredis0.14")
endif()
set(CPACK_DEBIAN_PROGRAMS_DESCRIPTION "visited-URL table and Bloom filter files on the command line
${simdbloom_deb_about}

This package holds the simdbloom command: dedup (each line not seen before,
in input order), build, add, query, info, merge and more.")
set(CPACK_DEBIAN_REDISRUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_REDISRUNTIME_PACKAGE_DEPENDS
  "libc6 (>= 2.34), libhiredis0.14, ${simdbloom_deb_runtime} ${simdbloom_deb_same}")
set(CPACK_DEBIAN_REDISRUNTIME_PACKAGE_CONTROL_EXTRA
  ${PROJECT_BINARY_DIR}/debian/simdbloom-redis/shlibs
  ${PROJECT_BINARY_DIR}/debian/simdbloom-redis/triggers)
set(CPACK_DEBIAN_REDISRUNTIME_DESCRIPTION "one Bloom filter for a fleet, in a Redis Cluster (shared library)
${simdbloom_deb_about}

This package holds libsimdbloom-redis, which keeps one filter in a Redis
Cluster for a fleet of workers.")
set(CPACK_DEBIAN_REDISDEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_REDISDEV_PACKAGE_DEPENDS
  "${simdbloom_deb_redisruntime} ${simdbloom_deb_same}, ${simdbloom_deb_dev} ${simdbloom_deb_same}, libhiredis-dev")
set(CPACK_DEBIAN_REDISDEV_DESCRIPTION "one Bloom filter for a fleet, in a Redis Cluster (development files)
${simdbloom_deb_about}

This package holds libsimdbloom-redis's header, static library, and its
pkg-config and CMake package files.")
include(CPack)
