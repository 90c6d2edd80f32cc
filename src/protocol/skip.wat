;; The accelerated skip: what skipValue in src/protocol/json-skip.ts does for an object or an array
;; no hook reads, with SIMD inside strings, where Kubernetes' JSON has most of its bytes (image
;; digests, condition messages, managedFields): sixteen bytes looked at by one comparison.
;; docs/wire.md ("The skipper") says when it runs and what it buys; `npm run build` compiles this
;; text with wabt (scripts/wasm.mjs), nothing else is shipped.
;;
;; It checks what skipValue checks: strings closed, brackets balanced and matched, nothing between
;; strings but blanks, punctuation, numbers and literals (the table below says which bytes), at
;; most 10,000 brackets deep (MAX_DEPTH). It answers the address just after the value, or a
;; negative number saying why not; the caller then leaves the body to the strict parser.
;;
;; Each large body has a memory of its own (src/protocol/skip-wasm.ts makes it), laid out as:
;;   0      the class of each byte value, 256 bytes (CLASS of json-skip.ts, copied in by the caller)
;;   256    the closer each open bracket waits for, MAX_DEPTH bytes
;;   10304  the body (BODY_OFFSET: past the two, on a 64-byte boundary), then 64 bytes of padding
;;          that a 16-byte load near the body's end may read: whatever they hold, nothing at or
;;          past `end` is taken for the body's.
;; The memory is shared (a SharedArrayBuffer): the app's thread reads a body into it and the hook
;; thread (src/thread/hook-thread.ts) skips it where it lies; only one of them touches it at a time.
(module
  (import "env" "memory" (memory 1 65536 shared))

  ;; skip(at, end): `at` is the address of the `{`, `[` or `"` that opens the value, `end` the address
  ;; just after the body. Answers the address after the value's closer, or
  ;;   -1 the value does not close before `end`   -2 a byte JSON does not allow between strings
  ;;   -3 a bracket that does not match           -4 nested deeper than MAX_DEPTH
  (func (export "skip") (param $at i32) (param $end i32) (result i32)
    (local $depth i32)     ;; brackets open
    (local $byte i32)      ;; the byte at $at, between strings
    (local $class i32)     ;; its class: 0 not allowed, 1 between, 2 quote, 3 opener, 4 closer
    (local $found i32)     ;; a bit for each of sixteen string bytes that is a quote or a backslash
    (local $chunk v128)    ;; sixteen bytes of a string
    (local $quotes v128)   ;; sixteen `"`
    (local $backslashes v128) ;; sixteen `\`
    (local.set $quotes (i8x16.splat (i32.const 0x22)))
    (local.set $backslashes (i8x16.splat (i32.const 0x5c)))

    ;; One byte between strings per turn; a string is run through whole in the inner loop.
    (loop $between
      (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
      (local.set $byte (i32.load8_u (local.get $at)))
      (local.set $class (i32.load8_u (local.get $byte)))

      ;; A quote opens a string: find its closing quote, sixteen bytes at a time.
      (if (i32.eq (local.get $class) (i32.const 2))
        (then
          (local.set $at (i32.add (local.get $at) (i32.const 1)))
          (loop $string
            (local.set $chunk (v128.load align=1 (local.get $at)))
            (local.set $found
              (i8x16.bitmask
                (v128.or
                  (i8x16.eq (local.get $chunk) (local.get $quotes))
                  (i8x16.eq (local.get $chunk) (local.get $backslashes)))))
            ;; Neither in these sixteen: on to the next sixteen, unless the body ends first.
            (if (i32.eqz (local.get $found))
              (then
                (local.set $at (i32.add (local.get $at) (i32.const 16)))
                (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
                (br $string)))
            ;; The first of them (the lowest bit is the first byte); past the end it is not the body's.
            (local.set $at (i32.add (local.get $at) (i32.ctz (local.get $found))))
            (if (i32.ge_u (local.get $at) (local.get $end)) (then (return (i32.const -1))))
            ;; The closing quote: on with the bytes after it, or done when the value is this string
            ;; (skip called at a quote: no bracket open).
            (if (i32.eq (i32.load8_u (local.get $at)) (i32.const 0x22))
              (then
                (local.set $at (i32.add (local.get $at) (i32.const 1)))
                (if (i32.eqz (local.get $depth)) (then (return (local.get $at))))
                (br $between)))
            ;; A backslash: the byte after it is escaped, whatever it is (a quote included).
            (local.set $at (i32.add (local.get $at) (i32.const 2)))
            (br $string))))

      ;; Blanks, `,` `:`, the bytes of numbers and of true, false, null: nothing to track.
      (if (i32.eq (local.get $class) (i32.const 1))
        (then
          (local.set $at (i32.add (local.get $at) (i32.const 1)))
          (br $between)))

      ;; `{` or `[`: note the closer it waits for (`[` + 2 is `]`, `{` + 2 is `}`) on the stack at 256.
      (if (i32.eq (local.get $class) (i32.const 3))
        (then
          (if (i32.ge_u (local.get $depth) (i32.const 10000)) (then (return (i32.const -4))))
          (i32.store8 offset=256 (local.get $depth) (i32.add (local.get $byte) (i32.const 2)))
          (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
          (local.set $at (i32.add (local.get $at) (i32.const 1)))
          (br $between)))

      ;; `}` or `]`: it must be the closer the innermost open bracket waits for.
      (if (i32.eq (local.get $class) (i32.const 4))
        (then
          (if (i32.eqz (local.get $depth)) (then (return (i32.const -3))))
          (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
          (if (i32.ne (i32.load8_u offset=256 (local.get $depth)) (local.get $byte))
            (then (return (i32.const -3))))
          (local.set $at (i32.add (local.get $at) (i32.const 1)))
          ;; The value's own closer: done.
          (if (i32.eqz (local.get $depth)) (then (return (local.get $at))))
          (br $between))))

    ;; Any other byte (class 0): JSON does not allow it between strings.
    (i32.const -2)))
