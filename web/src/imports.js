// The JavaScript functions the WebAssembly module imports besides WASI (web/src/mtlite_web.cc),
// declared for the emscripten linker's undefined-symbol check only: the module has no emscripten
// JavaScript, web/mtlite.js provides them when it instantiates the module.
mergeInto(LibraryManager.library, {
  stream_event: function () {},
});
