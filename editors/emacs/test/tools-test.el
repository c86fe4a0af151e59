;;; tools-test.el --- A tool call with its arguments asked, the gateway in terminals  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; `mcp-sidecar-call-tool' on the demo's add: the sidecar asks for each argument from the
;; tool's schema, then for the go-ahead; the result opens in a buffer.  The gateway's
;; environment reaches `compile', `eshell' and `shell' started in the project, and a resource
;; opens in a read-only buffer.

;;; Code:

(require 'mcp-sidecar-test-helpers)
(require 'shell)

(ert-deftest tools-test-call-with-the-arguments-the-sidecar-asks ()
  "Pick add, answer a and b, confirm the review: the result buffer shows the sum."
  (mst-start)
  (setq mst-minibuffers nil)
  (mst-press "M-x" '("mcp-sidecar-call-tool") "RET" '("add") "TAB RET"
             "<f12>" '("2") "RET"
             "<f12>" '("40") "RET"
             "<f12>" '("Call") "TAB RET")
  (let ((result (mst-result "demo" "add")))
    (should (string-search "# demo › add" result))
    (should (string-search "2 + 40 = 42" result))
    (should (string-search "\"sum\": 42" result)))
  (let ((tools (car (car (mst-prompts "Call which tool of demo?")))))
    (should tools))
  (should (string-prefix-p "[step 1/2] demo: arguments for add › a — First addend"
                           (car (car (mst-prompts "› a — First addend")))))
  (should (string-search "[step 2/2]" (car (car (mst-prompts "› b — Second addend")))))
  (should (string-prefix-p "demo: arguments for add › Review your answers"
                           (car (car mst-minibuffers))))
  (mst-back-to-workspace))

(ert-deftest tools-test-the-mode-line-counts-the-servers ()
  "The indicator of `mcp-sidecar-mode' says how many servers run."
  (mst-start)
  (should (equal '(:eval (mcp-sidecar--lighter))
                 (cadr (assq 'mcp-sidecar-mode minor-mode-alist))))
  (should (equal " MCP 1/1" (mcp-sidecar--lighter))))

(ert-deftest tools-test-terminals-get-the-gateway ()
  "compile, eshell and shell in the project run with the gateway's variables."
  (let* ((conn (mst-start))
         (url (cdr (assoc "MCP_SIDECAR_GATEWAY"
                          (mst-wait (lambda () (mcp-sidecar--gateway conn))
                                    "the gateway's environment")))))
    (should (string-match-p "\\`http://127\\.0\\.0\\.1:[0-9]+/mcp\\'" url))
    (should (member (concat "MCP_SIDECAR_GATEWAY=" url) (mcp-sidecar-gateway-environment)))
    ;; M-x compile
    (mst-press "M-x" '("compile") "RET" "C-a C-k" '("printenv MCP_SIDECAR_GATEWAY") "RET")
    (let ((compilation (mst-buffer "*compilation*")))
      (mst-wait (lambda () (string-search "finished" (mst-text compilation))) "compile to finish")
      (should (string-search (concat "\n" url "\n") (mst-text compilation)))
      (kill-buffer compilation))
    (mst-back-to-workspace)
    ;; M-x eshell keeps the environment its commands get.
    (mst-press "M-x" '("eshell") "RET")
    (let ((eshell (mst-buffer "*eshell*")))
      (should (equal url (with-current-buffer eshell (getenv "MCP_SIDECAR_GATEWAY"))))
      (kill-buffer eshell))
    (mst-back-to-workspace)
    ;; M-x shell
    (let ((explicit-shell-file-name "/bin/sh"))
      (mst-press "M-x" '("shell") "RET"))
    (let ((shell (mst-buffer "*shell*")))
      (comint-send-string (get-buffer-process shell) "echo \"gateway=$MCP_SIDECAR_GATEWAY\"\n")
      (mst-wait (lambda () (string-search (concat "gateway=" url) (mst-text shell)))
                "the shell's answer")
      (let ((process (get-buffer-process shell)))
        (set-process-query-on-exit-flag process nil)
        (kill-process process)
        (mst-wait (lambda () (not (process-live-p process))) "the shell to end")
        (kill-buffer shell)))
    (mst-back-to-workspace)))

(ert-deftest tools-test-a-resource-opens-read-only ()
  "The demo's clock view is a resource: it opens in a read-only buffer."
  (mst-start)
  (mcp-sidecar-read-resource "demo" "ui://demo/clock.html")
  (let ((buffer (mst-buffer "*mcp resource: demo ui://demo/clock.html*")))
    (with-current-buffer buffer
      (should buffer-read-only)
      (should mcp-sidecar-resource-mode)
      (should (string-search "<" (mst-text buffer))))
    (kill-buffer buffer))
  (mst-back-to-workspace))

;;; tools-test.el ends here
