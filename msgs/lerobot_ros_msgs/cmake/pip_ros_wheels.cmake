# The ROS 2 wheels on PyPI (ros-std-msgs ...) export their <pkg>__rosidl_generator_py targets with the
# include folders of the machine that built them (/opt/python/cp312-cp312/...), which do not exist here.
# Instead of editing those packages' files, a call deferred to the end of this directory's configure step
# points every such missing folder at this build's Python / NumPy headers. With a ROS install from apt or
# source the folders exist and nothing changes. Used by colcon and by the wheel backend alike.
function(_lerobot_ros_fix_pip_ros_wheel_includes)
  set(_py_inc "${Python3_INCLUDE_DIRS}")
  set(_np_inc "${Python3_NumPy_INCLUDE_DIRS}")
  if(NOT _py_inc OR NOT _np_inc)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" -c "import sysconfig, numpy; print(sysconfig.get_paths()['include'] + ';' + numpy.get_include())"
      OUTPUT_VARIABLE _found OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(GET _found 0 _py_inc)
    list(GET _found 1 _np_inc)
  endif()
  get_directory_property(_targets IMPORTED_TARGETS)
  foreach(_t IN LISTS _targets)
    if(NOT _t MATCHES "__rosidl_generator_py$")
      continue()
    endif()
    get_target_property(_inc ${_t} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _inc)
      continue()
    endif()
    set(_fixed "")
    foreach(_dir IN LISTS _inc)
      if(NOT EXISTS "${_dir}" AND _dir MATCHES "/include/python3")
        set(_dir "${_py_inc}")
      elseif(NOT EXISTS "${_dir}" AND _dir MATCHES "numpy/_core/include$")
        set(_dir "${_np_inc}")
      endif()
      list(APPEND _fixed "${_dir}")
    endforeach()
    set_target_properties(${_t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fixed}")
  endforeach()
endfunction()
cmake_language(DEFER CALL _lerobot_ros_fix_pip_ros_wheel_includes)
