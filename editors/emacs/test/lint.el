;;; lint.el --- Byte-compile with warnings as errors, and checkdoc  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; emacs -Q --batch -l editors/emacs/test/lint.el
;;
;; Byte-compiles every .el of the package and of its tests with `byte-compile-error-on-warn'
;; (the .elc files go to a temporary directory, never beside the sources), then runs checkdoc
;; on the package's files.  Prints each problem and exits non-zero when there is one.

;;; Code:

(require 'checkdoc)
(require 'package)

(defvar lint-package-dir
  (file-name-directory (directory-file-name (file-name-directory load-file-name)))
  "The directory of the package's files (editors/emacs/).")

(defvar lint-problems 0
  "How many problems were found.")

(defun lint-compile (file out)
  "Byte-compile FILE into the directory OUT; count a failure as a problem."
  (let ((byte-compile-error-on-warn t)
        (byte-compile-dest-file-function
         (lambda (source) (expand-file-name (concat (file-name-nondirectory source) "c") out))))
    (unless (byte-compile-file file)
      (setq lint-problems (1+ lint-problems))
      (message "lint: %s does not compile cleanly" (file-relative-name file lint-package-dir)))))

(defun lint-checkdoc (file)
  "Run checkdoc on FILE; count and print each of its complaints."
  (let* ((found nil)
         (checkdoc-create-error-function
          (lambda (text start _end &optional _unfixable)
            (push (format "%s:%d: %s" (file-relative-name file lint-package-dir)
                          (line-number-at-pos start) text)
                  found)
            nil))
         (checkdoc-autofix-flag 'never)
         (checkdoc-spellcheck-documentation-flag nil))
    (with-current-buffer (find-file-noselect file)
      (checkdoc-current-buffer t)
      (kill-buffer))
    (dolist (problem (nreverse found))
      (setq lint-problems (1+ lint-problems))
      (message "lint: checkdoc: %s" problem))))

(defun lint-package-headers (file)
  "Check that package.el reads FILE's headers: name, version, Emacs 28.1, a URL."
  (with-temp-buffer
    (insert-file-contents file)
    (emacs-lisp-mode)
    (let ((desc (condition-case err (package-buffer-info)
                  (error (message "lint: package.el cannot read %s: %s" file
                                  (error-message-string err))
                         nil))))
      (unless (and desc
                   (eq (package-desc-name desc) 'mcp-sidecar)
                   (equal (package-desc-reqs desc) '((emacs (28 1))))
                   (alist-get :url (package-desc-extras desc)))
        (setq lint-problems (1+ lint-problems))
        (message "lint: the package headers of %s are not what package.el needs: %S"
                 file desc)))))

(let* ((out (make-temp-file "mcp-sidecar-lint" t))
       (package-files (directory-files lint-package-dir t "\\`mcp-sidecar.*\\.el\\'"))
       (test-files (directory-files (expand-file-name "test" lint-package-dir) t "\\.el\\'"))
       (load-path (append (list lint-package-dir (expand-file-name "test" lint-package-dir) out)
                          load-path)))
  (unwind-protect
      (progn
        (dolist (file (append package-files test-files))
          (lint-compile file out))
        (dolist (file package-files)
          (lint-checkdoc file))
        (lint-package-headers (expand-file-name "mcp-sidecar.el" lint-package-dir)))
    (delete-directory out t))
  (if (> lint-problems 0)
      (progn (message "lint: %d problem(s)" lint-problems)
             (kill-emacs 1))
    (message "lint: %d files compile without warnings, %d pass checkdoc"
             (+ (length package-files) (length test-files)) (length package-files))))

;;; lint.el ends here
