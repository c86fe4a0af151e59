;;; trust-test.el --- A server the workspace defines: asked about, trusted, untrusted  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; The workspace's .mcp.json defines the demo server "ws": the real sidecar asks whether to
;; trust it (a question in the minibuffer), and `mcp-sidecar-untrust', `mcp-sidecar-trust'
;; and the servers buffer change and show its state.

;;; Code:

(require 'mcp-sidecar-test-helpers)

(defun trust-test-workspace ()
  "The files of the workspace: its .mcp.json defines the server \"ws\"."
  (list (cons ".mcp.json"
              (json-serialize
               (list :mcpServers
                     (list :ws (list :command mst-bin :args ["demo-server"])))))))

(defun trust-test-decisions ()
  "The trust decisions the sidecar stored for \"ws\" (trust.json in XDG_STATE_HOME)."
  (let ((file (expand-file-name "mcp-sidecar/trust.json" (getenv "XDG_STATE_HOME"))))
    (and (file-exists-p file)
         (cl-remove-if-not (lambda (entry) (equal (plist-get entry :server) "ws"))
                           (append (json-parse-string (with-temp-buffer
                                                        (insert-file-contents file)
                                                        (buffer-string))
                                                      :object-type 'plist :false-object nil)
                                   nil)))))

(ert-deftest trust-test-asked-untrusted-and-trusted-again ()
  "Trust in the sidecar's question starts ws; untrust stops it; trust starts it again."
  (should (and mst-bin (file-executable-p mst-bin)))
  (mst-clear-messages)
  (setq mcp-sidecar-program mst-bin
        mcp-sidecar-servers (list (mst-demo)))
  (mcp-sidecar-mode 1)
  (mst-workspace "trusted-ws" (trust-test-workspace))
  (setq mst-minibuffers nil)
  ;; The sidecar asks as soon as it reads the workspace's file.
  (mst-press "M-x" '("mcp-sidecar-start") "RET" "<f12>" '("Trust") "TAB RET")
  (mst-wait-state "ws" "running")
  (let ((question (car (car (mst-prompts "Trust the MCP server")))))
    (should (string-search "\"ws\"" question))
    (should (string-search ".mcp.json" question)))
  (should (plist-get (car (trust-test-decisions)) :trusted))
  ;; The person's own server never needs trust: it is not offered.
  (mst-press "M-x" '("mcp-sidecar-untrust") "RET" '("ws") "RET")
  (mst-wait-state "ws" "needsTrust")
  (should (equal "running" (mst-server-state "demo")))
  (should-not (plist-get (car (trust-test-decisions)) :trusted))
  (mst-wait (lambda () (string-search "ws is no longer trusted (stopped)" (mst-messages)))
            "the message of untrust")
  ;; One server waits for trust: mcp-sidecar-trust takes it without asking.
  (let ((shown (length mst-minibuffers)))
    (mst-press "M-x" '("mcp-sidecar-trust") "RET")
    (mst-wait-state "ws" "running")
    (should (= (1+ shown) (length mst-minibuffers)) ; M-x's own minibuffer only
            ))
  (should (plist-get (car (trust-test-decisions)) :trusted))
  ;; The servers buffer lists both, with their sources.
  (mcp-sidecar-servers)
  (let ((text (mst-text (window-buffer (selected-window)))))
    (should (string-match-p "^ *ws +running +2026-07-28 +stdio .*\\.mcp\\.json" text))
    (should (string-match-p "^ *demo +running .*editor settings" text)))
  (mst-back-to-workspace))

;;; trust-test.el ends here
