;;; mcp-sidecar.el --- MCP client features through the mcp-sidecar language server  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;; Author: The mcp-sidecar authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, processes, convenience
;; URL: https://github.com/OWNER/mcp-sidecar

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Makes Emacs a full MCP client through `mcp-sidecar', a language server that hosts the MCP
;; servers of your project: their questions (elicitation) open in the minibuffer, their model
;; requests (sampling) open as drafts in buffers, and their tools, resources and prompts are
;; commands.  One sidecar runs per project (`project-current'), started by the first command
;; that needs it; it talks JSON-RPC with `jsonrpc.el' and needs nothing beyond what Emacs
;; ships, so it never competes with Eglot or lsp-mode for a buffer.
;;
;; Loading this file starts nothing and loads nothing else: the commands are autoloaded from
;; the package's other files.  Turn on `mcp-sidecar-mode' for the mode-line indicator and the
;; gateway's environment in `shell', `eshell', `vterm' and `compile'.
;;
;; The manual is README.md beside this file (editors/emacs in the repository).

;;; Code:

(defgroup mcp-sidecar nil
  "MCP client features (questions, drafts, tools) through mcp-sidecar."
  :group 'tools
  :prefix "mcp-sidecar-"
  :link '(url-link "https://github.com/OWNER/mcp-sidecar"))

(declare-function mcp-sidecar-reconfigure "mcp-sidecar-client" ())

(defun mcp-sidecar--set-and-send (symbol value)
  "Set SYMBOL to VALUE; running sidecars get the new settings.
Through workspace/didChangeConfiguration (`mcp-sidecar-reconfigure')."
  (set-default symbol value)
  (when (featurep 'mcp-sidecar-client)
    (mcp-sidecar-reconfigure)))

(defcustom mcp-sidecar-program nil
  "The mcp-sidecar executable: a file name, or a command name.
A command name is looked up in the variable `exec-path'.  nil finds it:
the build in the repository this package belongs to (target/release,
then target/debug), then `mcp-sidecar' in the variable `exec-path'."
  :type '(choice (const :tag "Find it" nil) (string :tag "File or command name")))

(defcustom mcp-sidecar-log-file nil
  "Where the sidecar writes its log (never its standard output, the LSP channel).
nil: mcp-sidecar.log in `user-emacs-directory'.  The symbol `stderr': no
file; the log stays in the sidecar's hidden stderr buffer."
  :type '(choice (const :tag "mcp-sidecar.log in user-emacs-directory" nil)
                 (const :tag "Standard error (a hidden buffer)" stderr)
                 (file :tag "File")))

(defcustom mcp-sidecar-log-level nil
  "The sidecar's log filter in RUST_LOG syntax, such as \"debug\".
nil: the sidecar's default."
  :type '(choice (const :tag "Default" nil) (string :tag "Filter")))

(defcustom mcp-sidecar-servers nil
  "MCP servers, as an alist of (NAME . DEFINITION).
DEFINITION is a plist in the shape of VS Code's mcp.json, for example
  ((\"everything\" :command \"npx\"
                 :args (\"-y\" \"@modelcontextprotocol/server-everything\")))
Lists of strings become JSON arrays.  These servers are yours (scope
\"user\"): they run without being trusted.  Servers a project defines in
its own files (.vscode/mcp.json, .mcp.json) are asked about first.
Set with `customize' or `setopt', running sidecars get the change at once;
after `setq', run \[mcp-sidecar-reconfigure]."
  :type '(alist :key-type (string :tag "Name") :value-type (plist :tag "Definition"))
  :set #'mcp-sidecar--set-and-send)

(defcustom mcp-sidecar-settings nil
  "Other settings of the sidecar, as a plist (see docs/configuration.md).
For example (:roots (:exclude (\"**/node_modules\")) :maxRestarts 3).
Running sidecars get a change as for the option `mcp-sidecar-servers'."
  :type '(plist :tag "Settings")
  :set #'mcp-sidecar--set-and-send)

(defcustom mcp-sidecar-workspace-folders nil
  "Extra folders given to every sidecar as workspace folders (and so as MCP roots).
The project's root always is one."
  :type '(repeat directory))

(defcustom mcp-sidecar-autostart nil
  "Whether visiting a file starts its project's sidecar.
Only while `mcp-sidecar-mode' is on.  nil: a sidecar starts when a
command first needs it."
  :type 'boolean)

(defcustom mcp-sidecar-gateway-functions '(shell eshell vterm compilation-start)
  "Functions that start terminals or processes with the gateway's environment.
While `mcp-sidecar-mode' is on, each runs with MCP_SIDECAR_GATEWAY and
MCP_SIDECAR_GATEWAY_TOKEN of its project's sidecar in `process-environment',
so that agents started there reach the project's MCP servers.  Set this
before turning the mode on."
  :type '(repeat function))

(defcustom mcp-sidecar-request-timeout 30
  "Seconds to wait for the sidecar's answer to a request no person answers."
  :type 'number)

(defcustom mcp-sidecar-events-buffer-size 0
  "How many characters of JSON-RPC traffic each sidecar keeps in its events buffer.
0 keeps none (the traffic carries what you type into the questions); nil
keeps all."
  :type '(choice (const :tag "All" nil) integer))

(defvar mcp-sidecar-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map "c" #'mcp-sidecar-call-tool)
    (define-key map "s" #'mcp-sidecar-servers)
    (define-key map "t" #'mcp-sidecar-tools)
    (define-key map "T" #'mcp-sidecar-trust)
    (define-key map "r" #'mcp-sidecar-read-resource)
    (define-key map "p" #'mcp-sidecar-get-prompt)
    (define-key map "g" #'mcp-sidecar-gateway-environment)
    (define-key map "a" #'mcp-sidecar-app-open)
    (define-key map "j" #'mcp-sidecar-tasks)
    (define-key map "k" #'mcp-sidecar-skills)
    (define-key map "l" #'mcp-sidecar-open-log)
    (define-key map "L" #'mcp-sidecar-open-sampling-log)
    (define-key map "q" #'mcp-sidecar-stop)
    map)
  "The mcp-sidecar commands, for a prefix key of your choice.
For example (keymap-global-set \"C-c m\" \\='mcp-sidecar-command-map), or
\(global-set-key (kbd \"C-c m\") \\='mcp-sidecar-command-map) before Emacs 29.")
(fset 'mcp-sidecar-command-map mcp-sidecar-command-map)

;; The commands live in the package's other files, loaded when one is first used.
(autoload 'mcp-sidecar-start "mcp-sidecar-client" nil t)
(autoload 'mcp-sidecar-stop "mcp-sidecar-client" nil t)
(autoload 'mcp-sidecar-reconfigure "mcp-sidecar-client" nil t)
(autoload 'mcp-sidecar-open-log "mcp-sidecar-client" nil t)
(autoload 'mcp-sidecar-call-tool "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-tools "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-servers "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-restart-server "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-trust "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-untrust "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-sign-in "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-sign-out "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-open-sampling-log "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-gateway-environment "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-app-open "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-app-close "mcp-sidecar-commands" nil t)
(autoload 'mcp-sidecar-read-resource "mcp-sidecar-resources" nil t)
(autoload 'mcp-sidecar-get-prompt "mcp-sidecar-resources" nil t)
(autoload 'mcp-sidecar-tasks "mcp-sidecar-tasks" nil t)
(autoload 'mcp-sidecar-cancel-task "mcp-sidecar-tasks" nil t)
(autoload 'mcp-sidecar-skills "mcp-sidecar-tasks" nil t)

(declare-function mcp-sidecar--status-text "mcp-sidecar-client" ())
(declare-function mcp-sidecar--gateway-variables "mcp-sidecar-client" (&optional dir))
(declare-function mcp-sidecar-start "mcp-sidecar-client" (&optional dir))

(defun mcp-sidecar--lighter ()
  "The mode-line text of `mcp-sidecar-mode', such as \" MCP 2/3 ✗1\"."
  (let ((text (and (featurep 'mcp-sidecar-client) (mcp-sidecar--status-text))))
    (if (and text (not (equal text "")))
        (concat " " (string-replace "%" "%%" text))
      "")))

(defun mcp-sidecar--with-gateway (function &rest args)
  "Call FUNCTION with ARGS, the gateway's variables in `process-environment'.
The variables are those of the sidecar of `default-directory's project."
  (let ((process-environment
         (if (featurep 'mcp-sidecar-client)
             (append (mcp-sidecar--gateway-variables) process-environment)
           process-environment)))
    (apply function args)))

;;;###autoload
(define-minor-mode mcp-sidecar-mode
  "Show the MCP servers' states in the mode line; give terminals the gateway.
The indicator reads \"MCP running/configured\" and then counts the
servers that failed (✗), are starting (…), wait for trust (?), need a
sign-in (⚿) or stopped (-), the questions waiting for you (✎), the
running tasks (⧗), and the latest progress of a running tool call.
While the mode is on, the functions in `mcp-sidecar-gateway-functions'
start their processes with the gateway's environment, and with
`mcp-sidecar-autostart' visiting a file starts its project's sidecar."
  :global t
  :group 'mcp-sidecar
  :lighter (:eval (mcp-sidecar--lighter))
  (dolist (function mcp-sidecar-gateway-functions)
    (if mcp-sidecar-mode
        (advice-add function :around #'mcp-sidecar--with-gateway)
      (advice-remove function #'mcp-sidecar--with-gateway)))
  (if mcp-sidecar-mode
      (add-hook 'find-file-hook #'mcp-sidecar--autostart)
    (remove-hook 'find-file-hook #'mcp-sidecar--autostart)))

(defun mcp-sidecar--autostart ()
  "Start the sidecar of the visited file's project (`find-file-hook')."
  (when (and mcp-sidecar-mode mcp-sidecar-autostart buffer-file-name
             (not (file-remote-p buffer-file-name)))
    (require 'mcp-sidecar-client)
    (with-demoted-errors "mcp-sidecar: %S"
      (mcp-sidecar-start))))

(provide 'mcp-sidecar)
;;; mcp-sidecar.el ends here
