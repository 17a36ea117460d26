// Package builder wires a controller to a manager in one expression, in
// the style of controller-runtime's builder:
//
//	err := builder.ControllerManagedBy(mgr).
//		For(&widget.Widget{}).               // reconcile Widgets ...
//		Owns(&widget.Part{}).                // ... and the Widget that controls a changed Part
//		Watches(&widget.Gadget{}, handler).  // ... and whatever handler maps a Gadget to
//		WithEventFilter(controller.GenerationChanged[client.Object]()).
//		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).
//		Complete(reconciler)
//
// The informers come from the manager's cache (one per kind, shared by
// every controller), the controller is added to the manager (it runs
// while the manager leads, started once the cache holds every write made
// before the election: see package manager), and it logs to the manager's logger and
// records its metrics in the manager's Registerer.
package builder
