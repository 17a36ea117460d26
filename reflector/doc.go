// Package reflector is the client half of List-Watch: a Reflector that lists
// and watches any ListerWatcher, a DeltaFIFO, a thread-safe indexed Store,
// SharedIndexInformers with per-handler buffering, and an informer factory.
// Workqueues and controllers live in reflector/workqueue and
// reflector/controller.
package reflector
