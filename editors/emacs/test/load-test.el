;;; load-test.el --- Loading the package costs little and starts nothing  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; In fresh Emacs processes: `(require 'mcp-sidecar)' and `mcp-sidecar-mode' load neither
;; jsonrpc.el nor the package's other files and start no process, and (byte-compiled, as a
;; package manager installs it) they take under 10 ms.

;;; Code:

(require 'ert)
(require 'cl-lib)

(defconst load-test-dir
  (file-name-directory (directory-file-name (file-name-directory
                                             (or load-file-name buffer-file-name))))
  "The package's directory.")

(defun load-test-emacs (dir form)
  "Run FORM in a fresh `emacs -Q --batch' with DIR on `load-path'.
Return what it printed."
  (with-temp-buffer
    (let ((status (call-process (expand-file-name invocation-name invocation-directory)
                                nil (list t nil) nil "-Q" "--batch" "-L" dir
                                "--eval" (prin1-to-string form))))
      (should (eql 0 status))
      (buffer-string))))

(ert-deftest load-test-loading-starts-nothing ()
  "The mode on and a file visited: no jsonrpc, no other file of the package, no process."
  (let ((printed (load-test-emacs
                  load-test-dir
                  `(progn (require 'mcp-sidecar)
                          (mcp-sidecar-mode 1)
                          (find-file ,(expand-file-name "README.md" load-test-dir))
                          (prin1 (list (featurep 'jsonrpc) (featurep 'mcp-sidecar-client)
                                       (featurep 'mcp-sidecar-ui) (length (process-list))
                                       (fboundp 'mcp-sidecar-call-tool)
                                       (autoloadp (symbol-function 'mcp-sidecar-call-tool))))))))
    (should (equal "(nil nil nil 0 t t)" (car (last (split-string printed "\n" t)))))))

(ert-deftest load-test-loading-takes-under-10-ms ()
  "The byte-compiled package loads and turns its mode on in under 10 ms (median of 7)."
  (let ((out (make-temp-file "mcp-sidecar-load" t)))
    (unwind-protect
        (let ((byte-compile-dest-file-function
               (lambda (source) (expand-file-name (concat (file-name-nondirectory source) "c")
                                                  out))))
          ;; The source beside the compiled file, as package managers leave it.
          (copy-file (expand-file-name "mcp-sidecar.el" load-test-dir)
                     (expand-file-name "mcp-sidecar.el" out))
          (should (byte-compile-file (expand-file-name "mcp-sidecar.el" out)))
          (let* ((times (cl-loop repeat 7
                                 collect (string-to-number
                                          (car (last (split-string
                                                      (load-test-emacs
                                                       out
                                                       '(let ((start (float-time)))
                                                          (require 'mcp-sidecar)
                                                          (mcp-sidecar-mode 1)
                                                          (princ (- (float-time) start))))
                                                      "\n" t))))))
                 (median (nth 3 (sort times #'<))))
            (message "load-test: loading and the mode take %.2f ms (median of 7)"
                     (* 1000 median))
            (should (< median 0.010))))
      (delete-directory out t))))

;;; load-test.el ends here
