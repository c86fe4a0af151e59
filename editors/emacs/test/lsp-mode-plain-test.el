;;; lsp-mode-plain-test.el --- lsp-mode 8 runs the sidecar as a plain LSP server  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; Debian's elpa-lsp-mode 8.0.0 runs the sidecar as a language server of a project, with the
;; configuration of `lpt-configure' (what docs/editors.md gives a person) and without the
;; mcp-sidecar package: every flow is plain LSP 3.17.  The person's input is real minibuffer
;; input: keyboard macros (`execute-kbd-macro') that lsp-mode's own `completing-read's read.
;; <f12> in a macro waits (with a deadline) until the next minibuffer was shown and left, so
;; the keys after it are that minibuffer's.  Every wait has a deadline; nothing sleeps.
;;
;; What lsp-mode 8.0.0 does with each plain-LSP message, as these tests found it:
;; - `window/showMessageRequest' is a `completing-read' (`lsp--window-log-message-request');
;; - it declares `window.showDocument' nil (`lsp--client-capabilities'), so the sidecar names
;;   each document in `window/showMessage' ("Open PATH", `lsp--window-show-message') and the
;;   person opens it;
;; - a code action's command runs through `lsp-workspace-command-execute', a synchronous
;;   `lsp-request' that blocks Emacs until the answer or `lsp-response-timeout' (10 s), then
;;   cancels it: a tool call that waits on the person's form cannot be answered.  The client's
;;   `:action-handlers' run the sidecar's two long commands with `lsp-request-async' instead;
;; - the documents live outside the project: the documents folder is a second folder of the
;;   session and the client is `:multi-root', so its files open in the same sidecar.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'subr-x)
(require 'package)

;; Debian's packaging: elpa-* install under /usr/share/emacs/site-lisp/elpa.
(eval-and-compile
  (setq package-directory-list '("/usr/share/emacs/site-lisp/elpa")
        package-user-dir (expand-file-name "elpa" (getenv "HOME")))
  (package-initialize))
(require 'lsp-mode)
(require 'lsp-diagnostics)
(require 'lsp-lens)
(require 'lsp-completion)
(require 'flymake)
(require 'python)

(defvar lpt-bin (getenv "MCP_SIDECAR_BIN")
  "The sidecar under test.")

(defvar lpt-home (file-name-as-directory (getenv "HOME")))

(defvar lpt-project (expand-file-name "project/" lpt-home)
  "The person's project.")

(defvar lpt-documents
  (file-name-as-directory
   (expand-file-name "mcp-sidecar/documents" (or (getenv "XDG_STATE_HOME")
                                                 (expand-file-name ".local/state" lpt-home))))
  "Where the sidecar writes its documents.")

;;;; Real minibuffer input

(defvar lpt-minibuffers nil
  "Each minibuffer shown, newest first: its prompt.")

(defvar lpt-exits 0
  "How many minibuffers were left.")

(add-hook 'minibuffer-setup-hook (lambda () (push (minibuffer-prompt) lpt-minibuffers)))
(add-hook 'minibuffer-exit-hook (lambda () (setq lpt-exits (1+ lpt-exits))))

(defun lpt-wait (predicate what &optional seconds)
  "Run the event loop until PREDICATE returns non-nil; return that.
Fail after SECONDS (default 20), naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 20))) value)
    (while (not (setq value (funcall predicate)))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s" what))
      (accept-process-output nil 0.05))
    value))

(defun lpt-await-minibuffer ()
  "Wait until the next minibuffer was shown and left (<f12> in the tests)."
  (interactive)
  (unless (active-minibuffer-window)
    (let ((before lpt-exits))
      (lpt-wait (lambda () (> lpt-exits before)) "a question in the minibuffer" 30))))

(global-set-key (kbd "<f12>") #'lpt-await-minibuffer)

(defun lpt-press (&rest parts)
  "Type PARTS as the person would.
A string is `kbd' notation, a list holds literal text."
  (execute-kbd-macro
   (apply #'vconcat (mapcar (lambda (part) (if (consp part) (car part) (kbd part))) parts))))

(defun lpt-text (buffer)
  "The text of BUFFER."
  (with-current-buffer buffer (buffer-substring-no-properties (point-min) (point-max))))

(defun lpt-messages ()
  "The text of *Messages*."
  (lpt-text (messages-buffer)))

(defun lpt-clear-messages ()
  "Empty *Messages*: a test reads only its own messages."
  (with-current-buffer (messages-buffer)
    (let ((inhibit-read-only t))
      (erase-buffer))))

(defun lpt-named-document (suffix)
  "Wait for the message naming a sidecar document ending in SUFFIX.
Return its path."
  (lpt-wait (lambda ()
              (let ((text (lpt-messages)))
                (and (string-match (concat "Open \\(" (regexp-quote lpt-documents)
                                           "[^ \n]*" (regexp-quote suffix) "\\)")
                                   text)
                     (match-string 1 text))))
            (concat "a message naming a " suffix " document") 30))

;;;; The person's configuration (docs/editors.md)

(defvar lpt-results nil
  "What the sidecar's long commands answered, newest first.")

;; A person's own: the sidecar's long commands run without blocking Emacs (the client's
;; `:action-handlers' below), `M-x my-mcp-sidecar-choose-tool', `M-x my-mcp-sidecar-cancel'.

(defun my-mcp-sidecar-run (command)
  "Run the sidecar's COMMAND without waiting: it may wait on you."
  (lsp-request-async "workspace/executeCommand"
                     (list :command (lsp:command-command command)
                           :arguments (lsp:command-arguments? command))
                     (lambda (result) (push result lpt-results))
                     :error-handler
                     (lambda (error)
                       (push error lpt-results)
                       (message "MCP: %s" (lsp:json-error-message error)))
                     :mode 'detached
                     :cancel-token 'my-mcp-sidecar))

(defun my-mcp-sidecar-choose-tool ()
  "Call a tool: the sidecar asks which, then its arguments."
  (interactive)
  (my-mcp-sidecar-run (lsp-make-command :title "" :command "mcp-sidecar.chooseTool")))

(defun my-mcp-sidecar-cancel ()
  "Cancel the tool call running."
  (interactive)
  (lsp-cancel-request-by-token 'my-mcp-sidecar))

(defun lpt-configure ()
  "Configure lsp-mode for the sidecar as docs/editors.md says.
The session is private: its file is in the test's HOME."
  (setq lsp-session-file (expand-file-name "lsp-session" lpt-home)
        lsp-client-packages nil
        lsp-enable-file-watchers nil
        lsp-restart 'ignore
        lsp-keep-workspace-alive nil
        lsp-enable-snippet nil
        lsp-completion-provider :none
        lsp-headerline-breadcrumb-enable nil
        lsp-modeline-code-actions-enable nil
        lsp-modeline-diagnostics-enable nil
        lsp-diagnostics-provider :flymake
        lsp-lens-enable t
        lsp-auto-execute-action nil)
  ;; The person's configuration starts here.
  (define-derived-mode mcpform-mode conf-unix-mode "MCP form"
    "A form of the MCP sidecar: one key: value line per field.")
  (add-to-list 'auto-mode-alist '("\\.mcpform\\'" . mcpform-mode))
  (add-to-list 'lsp-language-id-configuration '(mcpform-mode . "mcpform"))
  (lsp-register-client
   (make-lsp-client
    :new-connection (lsp-stdio-connection (list lpt-bin))
    :activation-fn (lsp-activate-on "python" "markdown" "mcpform")
    :server-id 'mcp-sidecar
    :add-on? t
    :multi-root t
    :initialization-options
    `(:servers (:demo (:command ,lpt-bin :args ["demo-server" "--era" "both"])))
    :action-handlers (ht ("mcp-sidecar.callTool" #'my-mcp-sidecar-run)
                         ("mcp-sidecar.chooseTool" #'my-mcp-sidecar-run))))
  (dolist (hook '(python-mode-hook markdown-mode-hook mcpform-mode-hook))
    (add-hook hook #'lsp))
  (lsp-workspace-folders-add lpt-project)
  (lsp-workspace-folders-add lpt-documents))

;;;; The session

(defvar lpt-source nil
  "The buffer of the project's Python file.")

(defun lpt-workspace ()
  "The running sidecar's lsp-mode workspace."
  (cl-find-if (lambda (ws) (eq (lsp--client-server-id (lsp--workspace-client ws)) 'mcp-sidecar))
              (lsp--session-workspaces (lsp-session))))

(defun lpt-start ()
  "Open the project's file: lsp-mode starts the sidecar, which asks to trust demo.
Answer Trust; return when the demo offers its tools."
  (unless (and lpt-source (buffer-live-p lpt-source) (lpt-workspace))
    (should (and lpt-bin (file-executable-p lpt-bin)))
    (make-directory lpt-project t)
    (make-directory lpt-documents t)
    (set-file-modes lpt-documents #o700)
    (with-temp-file (expand-file-name "main.py" lpt-project)
      (insert "print('hello')\n"))
    (lpt-configure)
    (lpt-clear-messages)
    (setq lpt-minibuffers nil)
    (delete-other-windows)
    (lpt-press "C-x C-f" `(,(expand-file-name "main.py" lpt-project)) "RET"
               "<f12>" '("Trust") "RET")
    (setq lpt-source (get-file-buffer (expand-file-name "main.py" lpt-project)))
    (should (string-search "Trust the MCP server" (car lpt-minibuffers)))
    (should (eq 'initialized (lsp--workspace-status (lpt-workspace))))
    (lpt-wait (lambda () (lpt-tool-actions)) "the demo's tools in the code actions" 30)))

(defun lpt-tool-actions ()
  "The titles of the code actions at point in the project's file."
  (with-current-buffer lpt-source
    (mapcar #'lsp:code-action-title (lsp-code-actions-at-point))))

(defun lpt-open (path)
  "Open PATH as the person does (C-x C-f); return its buffer."
  (lpt-press "C-x C-f" `(,path) "RET")
  (let ((buffer (get-file-buffer path)))
    (should buffer)
    (with-current-buffer buffer
      (should (memq (lpt-workspace) (lsp-workspaces))))
    buffer))

(defun lpt-set-field (key value)
  "Write VALUE on the line of KEY in the current form."
  (goto-char (point-min))
  (should (re-search-forward (concat "^" (regexp-quote key) ":.*$") nil t))
  (replace-match (concat key ": " value) t t))

;;;; The tests

(defun lpt-call-from-code-action (tool)
  "In the project's file, run the code action MCP: call demo/TOOL….
Return the path of the form it names."
  (lpt-clear-messages)
  (setq lpt-results nil)
  (with-current-buffer lpt-source
    (switch-to-buffer lpt-source)
    (lpt-press "M-x" '("lsp-execute-code-action") "RET"
               "<f12>" `(,(concat "MCP: call demo/" tool "…")) "RET"))
  (should (equal "Select code action: " (car lpt-minibuffers)))
  (lpt-named-document ".mcpform"))

(defun lpt-lenses ()
  "The titles of the code lenses shown in the current buffer."
  (let (titles)
    (dolist (overlay (overlays-in (point-min) (point-max)))
      (when (overlay-get overlay 'lsp-lens)
        (dolist (lens (overlay-get overlay 'lsp--metadata))
          (push (substring-no-properties lens) titles))))
    (sort titles #'string<)))

(defun lpt-lens (title)
  "Click the code lens TITLE of the current buffer (what its mouse-1 runs)."
  (let ((lens (cl-some (lambda (overlay)
                         (cl-find title (overlay-get overlay 'lsp--metadata)
                                  :test (lambda (title lens)
                                          (equal title (substring-no-properties lens)))))
                       (overlays-in (point-min) (point-max)))))
    (should lens)
    (call-interactively (get-text-property 0 'action lens))))

(defun lpt-progress ()
  "The progress tokens lsp-mode shows in the mode line."
  (ht-keys (lsp--workspace-work-done-tokens (lpt-workspace))))

(defun lpt-file-text (path)
  "The text of the file PATH."
  (with-temp-buffer (insert-file-contents path) (buffer-string)))

(ert-deftest lsp-mode-plain-test-a-tool-from-a-code-action-with-its-form ()
  "MCP: call demo/add… from the code actions, its form saved wrong, then right.
The form is named, opened, saved wrong (a diagnostic on its line), then right:
the result."
  (lpt-start)
  (should (member "MCP: call demo/add…" (lpt-tool-actions)))
  (let* ((before (lpt-progress))
         (path (lpt-call-from-code-action "add"))
         (form (lpt-open path))
         (progress (cl-set-difference (lpt-progress) before :test #'equal)))
    (should (string-suffix-p "-demo.mcpform" path))
    (should (= 1 (length progress)))
    (should (string-search "demo: add" (with-current-buffer lpt-source (lsp--progress-status))))
    (with-current-buffer form
      (should (eq major-mode 'mcpform-mode))
      (should (string-search "Code actions: Call add, Cancel." (lpt-text form)))
      (should (bound-and-true-p flymake-mode))
      (lpt-wait #'lpt-lenses "the form's code lenses")
      (should (equal '("Call add" "Cancel") (lpt-lenses)))
      ;; Wrong: a is no number.
      (lpt-set-field "a" "two")
      (lpt-set-field "b" "40")
      (lpt-press "C-x C-s")
      (let* ((line (save-excursion (goto-char (point-min))
                                   (re-search-forward "^a:") (line-number-at-pos)))
             (diagnostic
              (lpt-wait (lambda ()
                          (cl-find-if (lambda (d)
                                        (= line (line-number-at-pos (flymake-diagnostic-beg d))))
                                      (flymake-diagnostics)))
                        "flymake's diagnostic on the line of a")))
        (should (string-search "number" (flymake-diagnostic-text diagnostic))))
      (should-not lpt-results)
      (should (file-exists-p path))
      ;; Right: saved, it is sent.
      (lpt-set-field "a" "2")
      (lpt-press "C-x C-s"))
    (lpt-wait (lambda () lpt-results) "the result of add" 30)
    (should (string-search "2 + 40 = 42" (format "%S" (car lpt-results))))
    (lpt-wait (lambda () (not (file-exists-p path))) "the answered form to go")
    (should (string-search "2 + 40 = 42" (lpt-file-text (lpt-named-document "-result.md"))))
    (lpt-wait (lambda () (not (member (car progress) (lpt-progress)))) "the progress to end")
    (kill-buffer form)))

(ert-deftest lsp-mode-plain-test-without-the-action-handler-a-call-blocks-then-is-cancelled ()
  "lsp-mode's own way to run a code action's command blocks, then cancels it.
It is a synchronous request: Emacs waits for the answer (the form cannot be
filled meanwhile) until `lsp-response-timeout', then cancels the call."
  (lpt-start)
  (let* ((handlers (lsp--client-action-handlers (lsp--workspace-client (lpt-workspace))))
         (handler (gethash "mcp-sidecar.callTool" handlers))
         (debug-on-error nil)
         (lsp-response-timeout 2)
         (started (float-time))
         path)
    (unwind-protect
        (progn
          (remhash "mcp-sidecar.callTool" handlers)
          (setq path (lpt-call-from-code-action "echo")))
      (puthash "mcp-sidecar.callTool" handler handlers))
    ;; The command returned only after the timeout, its form already named.
    (should (>= (- (float-time) started) 2))
    (should (string-search "Timeout while waiting for response" (lpt-messages)))
    (should-not lpt-results)
    (lpt-wait (lambda () (not (file-exists-p path))) "the cancelled call's form to go")))

(ert-deftest lsp-mode-plain-test-a-lens-sends-the-form ()
  "The form's code lens Call echo sends what the buffer has, unsaved."
  (lpt-start)
  (let* ((path (lpt-call-from-code-action "echo"))
         (form (lpt-open path)))
    (with-current-buffer form
      (lpt-wait #'lpt-lenses "the form's code lenses")
      (should (equal '("Call echo" "Cancel") (lpt-lenses)))
      (lpt-set-field "text" "sent by a lens")
      (should (buffer-modified-p))
      (lpt-lens "Call echo"))
    (lpt-wait (lambda () lpt-results) "the result of echo" 30)
    (should (string-search "sent by a lens" (format "%S" (car lpt-results))))
    (lpt-wait (lambda () (not (file-exists-p path))) "the answered form to go")
    (kill-buffer form)))

(ert-deftest lsp-mode-plain-test-choose-a-tool-then-submit-with-a-code-action ()
  "The person's command runs mcp-sidecar.chooseTool.
Which tool is a choice in the minibuffer, the arguments a form, sent with its
code action Call echo."
  (lpt-start)
  (lpt-clear-messages)
  (setq lpt-results nil lpt-minibuffers nil)
  (switch-to-buffer lpt-source)
  (lpt-press "M-x" '("my-mcp-sidecar-choose-tool") "RET" "<f12>" '("echo") "RET")
  (should (string-prefix-p "Which tool of demo?" (car lpt-minibuffers)))
  (let* ((path (lpt-named-document ".mcpform"))
         (form (lpt-open path)))
    (with-current-buffer form
      (lpt-set-field "text" "hello, lsp-mode")
      (lpt-press "M-x" '("lsp-execute-code-action") "RET" "<f12>" '("Call echo") "RET"))
    (lpt-wait (lambda () lpt-results) "the result of echo" 30)
    (should (string-search "hello, lsp-mode" (format "%S" (car lpt-results))))
    (should (string-search "hello, lsp-mode" (lpt-file-text (lpt-named-document "-result.md"))))
    (kill-buffer form)))

(ert-deftest lsp-mode-plain-test-a-call-cancelled-by-the-person ()
  "The person's cancel command ($/cancelRequest) ends a call waiting on its form."
  (lpt-start)
  (let ((path (lpt-call-from-code-action "add")))
    (switch-to-buffer lpt-source)
    (should (gethash 'my-mcp-sidecar lsp--cancelable-requests))
    (lpt-press "M-x" '("my-mcp-sidecar-cancel") "RET")
    (should-not (gethash 'my-mcp-sidecar lsp--cancelable-requests))
    (lpt-wait (lambda () (not (file-exists-p path))) "the cancelled call's form to go")
    (should-not lpt-results)))

(ert-deftest lsp-mode-plain-test-sampling-drafts-saved-to-send ()
  "analyze_flights: each sampling draft is a file saved to send it.
The request draft, edited and saved, goes on; the answer draft, written and
saved, is the tool's result."
  (lpt-start)
  (lpt-clear-messages)
  (setq lpt-results nil)
  (switch-to-buffer lpt-source)
  (lpt-press "M-x" '("lsp-execute-code-action") "RET"
             "<f12>" '("MCP: call demo/analyze_flights…") "RET")
  (let* ((path (lpt-named-document "-request.md"))
         (request (lpt-open path)))
    (with-current-buffer request
      (should (eq major-mode 'markdown-mode))
      (goto-char (point-min))
      (should (search-forward "maxTokens: 400" nil t))
      (replace-match "maxTokens: 64" t t)
      (lpt-clear-messages)
      (lpt-press "C-x C-s"))
    (let* ((path (lpt-named-document "-answer.md"))
           (answer (lpt-open path)))
      (with-current-buffer answer
        (should (string-search "model: manual" (lpt-text answer)))
        (goto-char (point-max))
        (insert "\nFlight 7 is the best value.\n")
        (lpt-press "C-x C-s"))
      (lpt-wait (lambda () lpt-results) "the result of analyze_flights" 30)
      (should (string-search "Flight 7 is the best value." (format "%S" (car lpt-results))))
      (kill-buffer answer))
    (kill-buffer request)))

(provide 'lsp-mode-plain-test)
;;; lsp-mode-plain-test.el ends here
