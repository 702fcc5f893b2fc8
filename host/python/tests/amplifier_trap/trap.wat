;; The smallest component exporting amplifier:modules/tool@1.0.0
;; (WIT: crates/amplifier-guest/wit/amplifier-modules.wit in microsoft/amplifier-core):
;;   get-spec: func() -> list<u8>;                              -- JSON ToolSpec
;;   execute:  func(input: list<u8>) -> result<list<u8>, string>;
;; get-spec returns {"name":"trap","parameters":{}} so that loading succeeds
;; (amplifier calls get-spec at load time); execute hits `unreachable` (a trap).
(component
  (core module $m
    (memory (export "memory") 1)
    ;; return area at 0: (ptr=16, len=31); JSON bytes at 16
    (data (i32.const 0) "\10\00\00\00\1f\00\00\00")
    (data (i32.const 16) "{\"name\":\"trap\",\"parameters\":{}}")
    (func (export "get-spec") (result i32) (i32.const 0))
    (func (export "execute") (param i32 i32) (result i32) unreachable)
    ;; bump allocator the host uses to copy the `input` list into memory
    (global $bump (mut i32) (i32.const 1024))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (global.get $bump))
      (global.set $bump (i32.add (local.get $p) (local.get 3)))
      (local.get $p))
  )
  (core instance $i (instantiate $m))
  (func $get-spec (result (list u8))
    (canon lift (core func $i "get-spec") (memory (core memory $i "memory"))))
  (func $execute (param "input" (list u8)) (result (result (list u8) (error string)))
    (canon lift (core func $i "execute") (memory (core memory $i "memory")) (realloc (core func $i "realloc"))))
  (instance $tool
    (export "get-spec" (func $get-spec))
    (export "execute" (func $execute)))
  (export "amplifier:modules/tool@1.0.0" (instance $tool))
)
