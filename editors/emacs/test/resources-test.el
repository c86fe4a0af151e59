;;; resources-test.el --- Resources, a template, a prompt and its arguments  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; fixtures/notes_server.py (a small MCP server: the demo has no resources or prompts to list)
;; behind the real sidecar: a template's variable asked with the server's completions, the
;; resource read into a buffer that follows the server's update, and a prompt whose argument
;; the sidecar asks.

;;; Code:

(require 'mcp-sidecar-test-helpers)

(defconst resources-test-server
  (list "notes" :command (or (executable-find "python3") "python3")
        :args (list (expand-file-name "fixtures/notes_server.py"
                                      (file-name-directory (or load-file-name buffer-file-name))))
        :protocolVersion "2025-11-25")
  "The notes server's definition.")

(ert-deftest resources-test-a-template-read-and-followed ()
  "Pick the template, complete its variable, read it; the server's update reads it again."
  (mst-start (list resources-test-server))
  (setq mst-minibuffers nil)
  (mst-press "M-x" '("mcp-sidecar-read-resource") "RET" '("notes › notes of") "TAB RET"
             '("gr") "TAB RET")
  (let ((buffer (mst-buffer "*mcp resource: notes notes://grace/notes*")))
    (should (string-prefix-p "notes: notes of › owner" (car (car mst-minibuffers))))
    (with-current-buffer buffer
      (should buffer-read-only)
      ;; Subscribed: the server said it changed, and it was read again.
      (mst-wait (lambda () (string-search "(read 2)" (mst-text buffer))) "the second read")
      (should (equal "notes at notes://grace/notes (read 2)" (mst-text buffer)))
      (should (plist-get mcp-sidecar--resource :subscribed)))
    (kill-buffer buffer))
  (mst-back-to-workspace))

(ert-deftest resources-test-a-prompt-with-its-argument-asked ()
  "Pick the prompt; the sidecar asks its argument (the server's suggestions), then the review."
  (mst-start (list resources-test-server))
  (setq mst-minibuffers nil)
  (mst-press "M-x" '("mcp-sidecar-get-prompt") "RET" '("notes › greet") "TAB RET"
             "<f12>" '("alan") "RET"
             "<f12>" '("Get") "TAB RET")
  (let ((text (mst-text (mst-buffer "*mcp prompt: notes/greet*"))))
    (should (string-search "## user" text))
    (should (string-search "Hello, alan!" text)))
  (should (string-search "› who" (car (car (mst-prompts "[step 1/1]")))))
  (mst-back-to-workspace))

;;; resources-test.el ends here
