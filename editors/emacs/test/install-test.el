;;; install-test.el --- package.el installs the package from its directory  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; The package's files, as a package manager takes them from editors/emacs (package-vc's
;; :lisp-dir, straight.el's :files), installed with package.el into a fresh package
;; directory: it byte-compiles them and writes their autoloads; a new Emacs then has the
;; commands and the mode autoloaded, and turning the mode on loads nothing more.

;;; Code:

(require 'ert)
(require 'cl-lib)

(defconst install-test-dir
  (file-name-directory (directory-file-name (file-name-directory
                                             (or load-file-name buffer-file-name))))
  "The package's directory.")

(defun install-test-emacs (elpa form)
  "Run FORM in a fresh `emacs -Q --batch' whose packages are in ELPA.
Return the last line it printed."
  (with-temp-buffer
    (let ((status (call-process
                   (expand-file-name invocation-name invocation-directory) nil (list t nil) nil
                   "-Q" "--batch" "--eval"
                   (prin1-to-string
                    `(progn (require 'package)
                            (setq package-user-dir ,elpa package-archives nil)
                            (package-initialize)
                            ,form)))))
      (should (eql 0 status))
      (car (last (split-string (buffer-string) "\n" t))))))

(ert-deftest install-test-package-el-installs-the-directory ()
  "package.el installs the files, compiled, with autoloads that start nothing."
  (let* ((work (make-temp-file "mcp-sidecar-install" t))
         (source (expand-file-name "mcp-sidecar/" work))
         (elpa (expand-file-name "elpa" work)))
    (unwind-protect
        (progn
          (make-directory source)
          (dolist (file (directory-files install-test-dir t "\\`mcp-sidecar.*\\.el\\'"))
            (copy-file file source))
          (install-test-emacs elpa `(package-install-file ,source))
          (let ((installed (car (directory-files elpa t "\\`mcp-sidecar-"))))
            (should installed)
            (dolist (file '("mcp-sidecar.elc" "mcp-sidecar-client.elc" "mcp-sidecar-ui.elc"
                            "mcp-sidecar-commands.elc" "mcp-sidecar-resources.elc"
                            "mcp-sidecar-autoloads.el"))
              (should (file-exists-p (expand-file-name file installed)))))
          (should (equal "(t t t nil nil)"
                         (install-test-emacs
                          elpa
                          '(progn (mcp-sidecar-mode 1)
                                  (prin1 (list mcp-sidecar-mode
                                               (autoloadp (symbol-function 'mcp-sidecar-call-tool))
                                               (autoloadp (symbol-function 'mcp-sidecar-get-prompt))
                                               (featurep 'jsonrpc)
                                               (process-list))))))))
      (delete-directory work t))))

;;; install-test.el ends here
