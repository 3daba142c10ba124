// libwavetile.so is made of the Wavetile libraries linked whole; this file gives the target
// a source of its own.
