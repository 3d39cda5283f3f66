// Package msl translates Hark's Metal Shading Language kernels
// (shaders/*.metal) into C++ for a compatibility header: Translate strips
// what C++ lacks, lists every kernel entry with its parameters, and takes
// the target's forms (Dialect, ArgForms) for threadgroup memory, function
// constants and the entry points' arguments. Two targets use it: the CUDA
// generator cuda/gen (go generate ./cuda, shipped as cuda/kernels.ptx.xz) and
// the test executor shaders/msltest (the kernels on Linux CPUs). It is a
// production package: it imports nothing of the tests.
package msl
