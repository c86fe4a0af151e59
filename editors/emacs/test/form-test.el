;;; form-test.el --- The demo's form: steps, Back, the review, Decline and Cancel  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; book_trip of the demo server asks a form (every field kind) through the real sidecar: each
;; field a question in the minibuffer, typed with keyboard macros.

;;; Code:

(require 'mcp-sidecar-test-helpers)

(defun form-test-call-book-trip (arguments)
  "Keys that call book_trip with ARGUMENTS (JSON text).
Through `mcp-sidecar-call-tool' with a prefix argument."
  (list "C-u M-x" '("mcp-sidecar-call-tool") "RET" '("book_trip") "TAB RET" (list arguments) "RET"))

(ert-deftest form-test-submit-with-back-and-a-reasked-field ()
  "Every field kind, a refused email asked again, Back to the name, the review, Submit."
  (mst-start)
  (setq mst-minibuffers nil)
  (apply #'mst-press
         (append (form-test-call-book-trip "{\"destination\": \"Porto\"}")
                 (list "<f12>" '("Ada Lovelace") "RET"
                       "<f12>" '("ada@") "RET"           ; not an email: asked again
                       "<f12>" "C-c C-b"                 ; Back to the name
                       "<f12>" "RET"                     ; the name as it was
                       "<f12>" '("ada@example.com") "RET"
                       "<f12>" "DEL" '("2") "RET"        ; travelers: 1 becomes 2
                       "<f12>" "RET"                     ; budget: the default
                       "<f12>" '("No") "RET"             ; window seat
                       "<f12>" '("Business") "TAB RET"   ; cabin
                       "<f12>" '("vegan") "RET"          ; meal
                       "<f12>" '("Full") "TAB RET"       ; insurance
                       "<f12>" '("lounge,wifi") "RET"    ; extras, several
                       "<f12>" '("2027-05-01") "RET"     ; departure
                       "<f12>" '("Submit") "TAB RET")))
  (let ((result (mst-result "demo" "book_trip")))
    (should (string-search "Booked: Ada Lovelace <ada@example.com>, 2 traveler(s) to Porto, business cabin" result))
    (should (string-search "\"window_seat\": false" result))
    (should (string-search "\"budget\": 1500.5" result))
    (should (string-search "\"insurance\": \"full\"" result))
    (should (string-search "\"meal\": \"vegan\"" result))
    (should (string-search "\"departure\": \"2027-05-01\"" result))
    (should (string-match-p "\"extras\": \\[\n *\"lounge\",\n *\"wifi\"\n *\\]" result)))
  ;; The questions named the step, the server and the field.
  (let ((names (mst-prompts "› Full name")))
    (should (string-prefix-p "[step 1/10] demo: Confirm your trip to Porto › Full name"
                             (car (nth 0 names))))
    ;; Back asked the name again with the answer given before.
    (should (equal "Ada Lovelace" (cdr (nth 1 names))))
    (should (= 2 (length names))))
  (let ((emails (mst-prompts "› Email")))
    (should (= 3 (length emails)))
    (should (string-search "[step 2/10]" (car (nth 0 emails))))
    (should (string-search "C-c C-b back" (car (nth 0 emails))))
    ;; The refused answer came back with the sidecar's message and the typed text.
    (should (string-prefix-p "⚠ Email: " (car (nth 1 emails))))
    (should (equal "ada@" (cdr (nth 1 emails)))))
  (should (equal "1500.5" (cdr (car (mst-prompts "› Budget (EUR)")))))
  (should (string-search "[step 6/10]" (car (car (mst-prompts "› Cabin")))))
  (should (string-search "several, separated by ," (car (car (mst-prompts "› Extras")))))
  (should (string-search "Review your answers" (car (car mst-minibuffers))))
  (mst-back-to-workspace))

(ert-deftest form-test-decline-and-cancel-are-kept-apart ()
  "C-g on the first question cancels; Skip through the rest and Decline declines."
  (mst-start)
  (apply #'mst-press (append (form-test-call-book-trip "{}") (list "<f12>" "C-g")))
  (should (string-search "Booking cancelled" (mst-result "demo" "book_trip")))
  (mst-back-to-workspace)
  (apply #'mst-press
         (append (form-test-call-book-trip "{}")
                 (list "<f12>" '("Alan Turing") "RET"
                       "<f12>" '("alan@example.com") "RET"
                       "<f12>" "C-c C-s"                  ; travelers: skipped
                       "<f12>" "C-c C-s"                  ; budget
                       "<f12>" '("Skip") "TAB RET"        ; window seat: its Skip item
                       "<f12>" '("Skip") "TAB RET"        ; cabin
                       "<f12>" '("Skip") "TAB RET"        ; meal
                       "<f12>" '("Skip") "TAB RET"        ; insurance
                       "<f12>" "C-c C-s"                  ; extras
                       "<f12>" "C-c C-s"                  ; departure
                       "<f12>" '("Decline") "TAB RET")))
  (let ((result (mst-result "demo" "book_trip")))
    (should (string-search "Booking declined" result))
    (should (string-search "\"action\": \"decline\"" result)))
  (let ((review (car (car mst-minibuffers))))
    (should (string-search "Review your answers" review)))
  (mst-back-to-workspace))

;; URL elicitation ------------------------------------------------------------------------------

(ert-deftest form-test-url-consent-copy-then-open ()
  "login asks before opening its page: Copy URL copies it, Open goes to `browse-url'."
  (mst-start)
  (setq mst-minibuffers nil)
  (let* ((opened nil)
         (browse-url-browser-function (lambda (url &rest _) (push url opened))))
    (mst-press "M-x" '("mcp-sidecar-call-tool") "RET" '("login") "TAB RET"
               "<f12>" '("Copy") "TAB RET"
               "<f12>" '("Open") "TAB RET")
    (let ((result (mst-result "demo" "login")))
      (should (string-search "Sign-in started in the browser: https://example.com/login?session="
                             result))
      (should (equal 1 (length opened)))
      (should (string-prefix-p "https://example.com/login?session=" (car opened)))
      (should (string-search (car opened) result))
      ;; Copy URL put the whole address on the kill ring (and so the clipboard).
      (should (equal (car opened) (current-kill 0 t)))))
  (let ((consent (mst-prompts "Sign in to Example Travel")))
    (should (= 2 (length consent)))
    (should (string-search "demo wants to open a page at example.com" (car (nth 0 consent)))))
  (mst-back-to-workspace))

;; Cancelled by the sidecar --------------------------------------------------------------------------

(ert-deftest form-test-a-cancelled-call-closes-its-open-question ()
  "Cancelling the call while a question is open: the sidecar closes it (cancelPrompt)."
  (mst-start)
  (apply #'mst-press (append (form-test-call-book-trip "{}") (list "<f12>" "<f11>")))
  (mst-wait (lambda () (string-search "demo › book_trip: cancelled" (mst-messages)))
            "the call to end as cancelled")
  (should-not (active-minibuffer-window))
  (should-not mcp-sidecar--pending)
  (should-not (get-buffer "*mcp result: demo/book_trip*"))
  (mst-back-to-workspace))

;;; form-test.el ends here
