;;; sampling-test.el --- Sampling drafts: accepted with C-c C-c, rejected with C-c C-k  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; analyze_flights of the demo server asks for a model answer; the real sidecar (its default
;; provider is the person) opens the request, then the answer, as drafts.

;;; Code:

(require 'mcp-sidecar-test-helpers)

(defconst sampling-test-answer "EX517 (Lisbon to Boston, nonstop, 389 EUR) is the best value."
  "What the person writes as the model's answer.")

(defun sampling-test-call ()
  "Call analyze_flights of the demo through `mcp-sidecar-call-tool'."
  (mst-press "M-x" '("mcp-sidecar-call-tool") "RET" '("analyze_flights") "TAB RET"))

(ert-deftest sampling-test-accept-both-drafts ()
  "C-c C-c sends the request draft; the answer typed into the answer draft is the result."
  (mst-start)
  (sampling-test-call)
  (let ((request (mst-draft "samplingRequest")))
    (with-current-buffer request
      (should (string-prefix-p "# Sampling request from `demo`" (mst-text request)))
      (should (string-search "maxTokens: 400" (mst-text request)))
      (should (string-search "C-c C-c accept" header-line-format))
      (should mcp-sidecar-draft-mode))
    (mst-press "C-c C-c")
    (should-not (buffer-live-p request)))
  (let ((answer (mst-draft "samplingResponse")))
    (should (string-prefix-p "# Model answer for `demo`" (mst-text answer)))
    (should (string-search "### assistant" (mst-text answer)))
    (mst-press "M->" (list sampling-test-answer) "C-c C-c")
    (should-not (buffer-live-p answer)))
  (let ((result (mst-result "demo" "analyze_flights")))
    (should-not (string-search "The tool reported an error" result))
    (should (string-search (concat "\"text\": \"" sampling-test-answer "\"") result))
    (should (string-search "\"model\": \"manual\"" result)))
  ;; The audit log has the exchange, accepted by the person.
  (let ((log (with-temp-buffer
               (insert-file-contents (expand-file-name "mcp-sidecar/sampling.jsonl"
                                                       (getenv "XDG_STATE_HOME")))
               (buffer-string))))
    (should (string-search "\"outcome\":\"accepted\"" log)))
  ;; mcp-sidecar-open-sampling-log: the sidecar asks Emacs to show that file.
  (mcp-sidecar-open-sampling-log)
  (let ((log (mst-wait (lambda () (get-file-buffer (expand-file-name "mcp-sidecar/sampling.jsonl"
                                                                     (getenv "XDG_STATE_HOME"))))
                       "the sampling log's buffer")))
    (should (eq log (window-buffer (selected-window))))
    (kill-buffer log))
  (mst-back-to-workspace))

(ert-deftest sampling-test-reject-the-request ()
  "C-c C-k on the request draft refuses at once: no answer draft, the call fails as refused."
  (mst-start)
  (sampling-test-call)
  (let ((request (mst-draft "samplingRequest")))
    (mst-press "C-c C-k")
    (should-not (buffer-live-p request)))
  (mst-wait (lambda () (string-search "demo › analyze_flights failed:" (mst-messages)))
            "the call to fail")
  (should (string-search "[refused]" (mst-messages)))
  (should-not (cl-find-if (lambda (buffer)
                            (let ((prompt (buffer-local-value 'mcp-sidecar-draft buffer)))
                              (and prompt (equal (plist-get (mcp-sidecar--prompt-params prompt)
                                                            :kind)
                                                 "samplingResponse"))))
                          (buffer-list)))
  (should-not (get-buffer "*mcp result: demo/analyze_flights*"))
  (mst-back-to-workspace))

(ert-deftest sampling-test-a-broken-draft-comes-back-with-its-problem ()
  "A request draft the sidecar cannot read opens again as it was, the line marked."
  (mst-start)
  (sampling-test-call)
  (let ((request (mst-draft "samplingRequest")) typed)
    (with-current-buffer request
      (goto-char (point-min))
      (should (search-forward "maxTokens: 400" nil t))
      (replace-match "maxTokens: lots" t t)
      (setq typed (mst-text request)))
    (mst-press "C-c C-c")
    (let* ((again (mst-draft "samplingRequest" (list request)))
           (marks (with-current-buffer again
                    (goto-char (point-min))
                    (search-forward "maxTokens: lots")
                    (delq nil (mapcar (lambda (overlay) (overlay-get overlay 'after-string))
                                      (overlays-in (line-beginning-position)
                                                   (line-end-position)))))))
      (should (equal typed (mst-text again)))
      (should (equal 1 (length marks)))
      (should (string-search "maxTokens must be a positive whole number" (car marks)))
      (mst-press "C-c C-k")))
  (mst-wait (lambda () (string-search "the person rejected the request" (mst-messages)))
            "the call to end")
  (mst-back-to-workspace))

;;; sampling-test.el ends here
