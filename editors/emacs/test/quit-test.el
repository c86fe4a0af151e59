;;; quit-test.el --- Quitting Emacs while a question is open  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; An Emacs of its own asks the demo's form; C-x C-c in the open question ends that Emacs at
;; once and cleanly (the sidecar is shut down, the question is left as it is).  run.sh then
;; checks that nothing it started is still running.

;;; Code:

(require 'ert)

(defconst quit-test-dir
  (file-name-directory (or load-file-name buffer-file-name))
  "The tests' directory.")

(ert-deftest quit-test-c-x-c-c-in-a-question-quits ()
  "C-x C-c in the form's first question exits Emacs with status 0, within seconds."
  (let ((script (make-temp-file "quit-test" nil ".el"))
        (start (float-time)))
    (unwind-protect
        (progn
          (with-temp-file script
            (prin1 '(progn
                      (require 'mcp-sidecar-test-helpers)
                      (mst-start)
                      (mst-press "M-x" '("mcp-sidecar-call-tool") "RET" '("book_trip") "TAB RET"
                                 "<f12>" "C-x C-c")
                      ;; Only when C-x C-c did not end Emacs.
                      (kill-emacs 3))
                   (current-buffer)))
          (let ((status (call-process (expand-file-name invocation-name invocation-directory)
                                      nil nil nil "-Q" "--batch"
                                      "-L" (expand-file-name ".." quit-test-dir)
                                      "-L" quit-test-dir "-l" script)))
            (should (eql 0 status))
            (should (< (- (float-time) start) 15))))
      (delete-file script))))

;;; quit-test.el ends here
