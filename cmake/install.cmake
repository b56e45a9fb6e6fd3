# Install rules and packaging (SIMDBLOOM_INSTALL): the libraries, the header, pkg-config and CMake
# package files, the command and its man page; `cpack -G DEB` builds a Debian package of them.
include(CMakePackageConfigHelpers)

set(SIMDBLOOM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/simdbloom)
if(simdbloom_installed_targets)
  install(TARGETS ${simdbloom_installed_targets} EXPORT simdbloomTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT library
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT library)
  install(EXPORT simdbloomTargets NAMESPACE simdbloom:: DESTINATION ${SIMDBLOOM_CMAKE_DIR}
    COMPONENT library)
endif()
install(FILES include/simdbloom.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT library)
# libsimdbloom-redis, where hiredis was found: its libraries (in the same CMake package, as
# simdbloom::simdbloom_redis), its header and simdbloom-redis.pc.
if(simdbloom_redis)
  set(simdbloom_redis_installed "")
  if(SIMDBLOOM_BUILD_SHARED)
    list(APPEND simdbloom_redis_installed simdbloom_redis_shared)
  endif()
  if(SIMDBLOOM_BUILD_STATIC)
    list(APPEND simdbloom_redis_installed simdbloom_redis_static)
  endif()
  if(simdbloom_redis_installed)
    install(TARGETS ${simdbloom_redis_installed} EXPORT simdbloomTargets
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT library
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library)
  endif()
  install(FILES include/simdbloom_redis.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    COMPONENT library)
endif()

configure_package_config_file(cmake/simdbloomConfig.cmake.in
  ${PROJECT_BINARY_DIR}/simdbloomConfig.cmake INSTALL_DESTINATION ${SIMDBLOOM_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/simdbloomConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/simdbloomConfig.cmake
  ${PROJECT_BINARY_DIR}/simdbloomConfigVersion.cmake DESTINATION ${SIMDBLOOM_CMAKE_DIR}
  COMPONENT library)

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
  COMPONENT library)
if(simdbloom_redis)
  configure_file(cmake/simdbloom-redis.pc.in ${PROJECT_BINARY_DIR}/simdbloom-redis.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/simdbloom-redis.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT library)
endif()

if(SIMDBLOOM_BUILD_PROGRAMS)
  install(TARGETS simdbloom-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT programs)
  install(FILES docs/simdbloom.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT programs)
endif()

# One .deb with everything installed above (library, header, development files, command).
set(CPACK_PACKAGE_NAME simdbloom)
set(CPACK_PACKAGE_VENDOR simdbloom)
set(CPACK_PACKAGE_CONTACT "simdbloom developers <simdbloom@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34)")
if(simdbloom_redis)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CPACK_DEBIAN_PACKAGE_DEPENDS}, libhiredis0.14")
endif()
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
include(CPack)
