;; Hostile component: imports an interface no host provides
;; (`wasm-hooks:missing/thing`), so it cannot be instantiated; the host must
;; refuse it at load with an error naming the import. It carries no WIT stamp
;; and no code: the import alone is the test.
(component
  (import "wasm-hooks:missing/thing@0.1.0" (instance
    (export "poke" (func))
  ))
)
