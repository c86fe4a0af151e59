;;; mcp-sidecar-test-helpers.el --- What the ERT tests of the package share  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; The tests drive the real package, the real sidecar (MCP_SIDECAR_BIN) and its demo server,
;; with real minibuffer input: keyboard macros (`execute-kbd-macro'), whose keys the real
;; `completing-read', `completing-read-multiple' and `read-from-minibuffer' read (in batch mode
;; Emacs reads the minibuffer from the executing macro).  The questions open from the
;; package's own timers, as they do for a person: the key <f12> of a macro waits (with a
;; deadline) until the next minibuffer was shown and left, so the keys after it are that
;; minibuffer's.  Every wait has a deadline; nothing sleeps.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'mcp-sidecar)
(require 'mcp-sidecar-commands)
(require 'mcp-sidecar-resources)

(defvar mst-bin (getenv "MCP_SIDECAR_BIN")
  "The sidecar under test.")

(defvar mst-minibuffers nil
  "Each minibuffer shown, newest first: (PROMPT . TEXT IT OPENED WITH).")

(defvar mst-exits 0
  "How many minibuffers were left.")

(add-hook 'minibuffer-setup-hook
          (lambda () (push (cons (minibuffer-prompt) (minibuffer-contents-no-properties))
                           mst-minibuffers)))
(add-hook 'minibuffer-exit-hook (lambda () (setq mst-exits (1+ mst-exits))))

(defun mst-wait (predicate what &optional seconds)
  "Run the event loop until PREDICATE returns non-nil.
Fail after SECONDS (default 20), naming WHAT.
Return what PREDICATE returned."
  (let ((deadline (+ (float-time) (or seconds 20))) value)
    (while (not (setq value (funcall predicate)))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))
    value))

(defun mst-await-minibuffer ()
  "Wait until the next minibuffer was shown and left (<f12> in the tests).
Inside a minibuffer it does nothing: the minibuffer it waits for is open."
  (interactive)
  (unless (active-minibuffer-window)
    (let ((before mst-exits))
      (mst-wait (lambda () (> mst-exits before)) "a question in the minibuffer"))))

(global-set-key (kbd "<f12>") #'mst-await-minibuffer)

(defun mst-cancel-calls ()
  "Cancel the requests waiting on the sidecar (<f11> in the tests, in a question).
As an editor does with $/cancelRequest: the sidecar then closes the open
question with `mcp-sidecar/cancelPrompt', which ends this command too."
  (interactive)
  (let ((conn (mcp-sidecar--connection)))
    (dolist (id (hash-table-keys (jsonrpc--request-continuations conn)))
      (jsonrpc-notify conn '$/cancelRequest (list :id id)))
    (mst-wait #'ignore "the question to be closed")))

(global-set-key (kbd "<f11>") #'mst-cancel-calls)

(defun mst-keys (&rest parts)
  "The keys of PARTS: a string is `kbd' notation, a list holds literal text."
  (apply #'vconcat (mapcar (lambda (part) (if (consp part) (car part) (kbd part))) parts)))

(defun mst-press (&rest parts)
  "Type the keys of PARTS (see `mst-keys') as the person would."
  (execute-kbd-macro (apply #'mst-keys parts)))

(defun mst-prompts (needle)
  "The minibuffers shown whose prompt contains NEEDLE, oldest first."
  (cl-remove-if-not (lambda (shown) (string-search needle (car shown)))
                    (reverse mst-minibuffers)))

(defvar mst-readme nil
  "The buffer of the current workspace's README.")

(defun mst-workspace (&optional name files)
  "Make the folder NAME (default \"ws\") in the private HOME with FILES.
FILES is an alist of (FILE . TEXT).  Visit its README in the only window;
return the folder."
  (let ((dir (file-name-as-directory (expand-file-name (or name "ws") (getenv "HOME")))))
    (make-directory dir t)
    (pcase-dolist (`(,file . ,text) (cons '("README.md" . "A workspace for the tests.\n") files))
      (let ((path (expand-file-name file dir)))
        (unless (and (file-exists-p path)
                     (equal text (with-temp-buffer (insert-file-contents path) (buffer-string))))
          (with-temp-file path (insert text)))))
    (delete-other-windows)
    (setq mst-readme (find-file (expand-file-name "README.md" dir)))
    dir))

(defun mst-demo (&optional name)
  "The definition of a demo server called NAME (default \"demo\")."
  (list (or name "demo") :command mst-bin :args '("demo-server")))

(defun mst-server-state (name)
  "The state of the server NAME of the current project's sidecar."
  (let ((conn (mcp-sidecar--connection)))
    (and conn (plist-get (gethash name (mcp-sidecar--servers conn)) :state))))

(defun mst-wait-state (name state)
  "Wait until the server NAME is in STATE."
  (mst-wait (lambda () (equal (mst-server-state name) state))
            (format "%s to be %s (is %s)" name state (mst-server-state name)) 30))

(defun mst-clear-messages ()
  "Empty the *Messages* buffer: a test reads only its own messages."
  (with-current-buffer (messages-buffer)
    (let ((inhibit-read-only t))
      (erase-buffer))))

(defun mst-start (&optional servers workspace)
  "Start the package with SERVERS (default: the demo) in WORKSPACE.
WORKSPACE is a folder name for `mst-workspace'.  Return the connection."
  (should (and mst-bin (file-executable-p mst-bin)))
  (mst-clear-messages)
  (setq mcp-sidecar-program mst-bin
        mcp-sidecar-servers (or servers (list (mst-demo))))
  (mcp-sidecar-mode 1)
  (mst-workspace workspace)
  (prog1 (mcp-sidecar-start)
    (dolist (server (or servers (list (mst-demo))))
      (mst-wait-state (car server) "running"))))

(defun mst-buffer (name &optional seconds)
  "Wait for the buffer NAME and return it."
  (mst-wait (lambda () (get-buffer name)) (concat "the buffer " name) seconds))

(defun mst-draft (kind &optional seen)
  "Wait for a draft buffer of KIND (\"samplingRequest\"...) not in SEEN.
Select it and return it."
  (let ((buffer (mst-wait (lambda ()
                            (cl-find-if (lambda (buffer)
                                          (let ((prompt (buffer-local-value 'mcp-sidecar-draft
                                                                            buffer)))
                                            (and prompt (not (memq buffer seen))
                                                 (equal (plist-get (mcp-sidecar--prompt-params
                                                                    prompt)
                                                                   :kind)
                                                        kind))))
                                        (buffer-list)))
                          (concat "a " kind " draft"))))
    (select-window (or (get-buffer-window buffer) (display-buffer buffer)))
    buffer))

(defun mst-text (buffer)
  "The text of BUFFER."
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun mst-messages ()
  "The text of the *Messages* buffer."
  (mst-text "*Messages*"))

(defun mst-result (server tool)
  "Wait for the result buffer of TOOL of SERVER; return its text and kill it."
  (let* ((buffer (mst-buffer (concat "*mcp result: " server "/" tool "*") 30))
         (text (mst-text buffer)))
    (kill-buffer buffer)
    text))

(defun mst-back-to-workspace ()
  "Select the workspace's README again, in the only window."
  (delete-other-windows)
  (switch-to-buffer mst-readme))

(provide 'mcp-sidecar-test-helpers)
;;; mcp-sidecar-test-helpers.el ends here
