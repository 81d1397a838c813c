// regionprof._native.RegionWrapper: the callable regionprof.torch installs as a module instance's
// `forward` (or a method, or an in-place compiled module's `_compiled_call_impl`), so a module call is a
// region without going through torch's hook dispatch.
#pragma once

#include <Python.h>

namespace regionprof::python {

/// Adds the type `RegionWrapper(handle: int, wrapped: callable)` to `module`. Calling an instance pushes
/// the registered region `handle`, calls `wrapped` with the same arguments (vectorcall, no tuple or dict
/// built), and pops the region whether `wrapped` returned or raised. Attributes it lacks are looked up on
/// `wrapped` (`__name__`, `__self__`); `__wrapped__` is `wrapped`, so inspect.signature() sees through it.
/// Returns false with a Python exception set on failure.
///
/// ```
/// regionprof::python::add_region_wrapper(m.ptr());  // in NB_MODULE
/// ```
bool add_region_wrapper(PyObject* module);

}  // namespace regionprof::python
