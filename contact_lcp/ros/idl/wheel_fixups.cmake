# Included by each interface package after rosidl_generate_interfaces().
#
# The ROS 2 wheels on PyPI export their *__rosidl_generator_py targets with the Python and
# NumPy header directories of the machine that built the wheels (/opt/python/...), which
# do not exist here: CMake then refuses to generate. Each such target gets, instead of the
# directories that do not exist, this interpreter's Python and NumPy headers. On a real ROS
# installation the paths exist and nothing changes.
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c
    "import sysconfig, numpy; print(sysconfig.get_paths()['include'] + ';' + numpy.get_include())"
  OUTPUT_VARIABLE _contact_lcp_py_includes
  OUTPUT_STRIP_TRAILING_WHITESPACE
  COMMAND_ERROR_IS_FATAL ANY)
get_property(_contact_lcp_targets DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(_target IN LISTS _contact_lcp_targets)
  if(_target MATCHES "__rosidl_generator_py$")
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    set(_kept ${_contact_lcp_py_includes})
    foreach(_dir IN LISTS _dirs)
      if(EXISTS "${_dir}")
        list(APPEND _kept "${_dir}")
      endif()
    endforeach()
    set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_kept}")
  endif()
endforeach()
