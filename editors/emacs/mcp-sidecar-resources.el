;;; mcp-sidecar-resources.el --- MCP resources and prompts in buffers  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `mcp-sidecar-read-resource' picks a resource or a template of the running servers (a
;; template's variables asked with the server's completions, the URI expanded by the sidecar)
;; and shows it in a read-only buffer that follows the server's updates while it lives.
;; `mcp-sidecar-get-prompt' runs a server's prompt: the sidecar asks for its arguments (with
;; the server's completions) and the messages open in a buffer.

;;; Code:

(require 'cl-lib)
(require 'mcp-sidecar-client)
(require 'mcp-sidecar-commands)

(defvar-local mcp-sidecar--resource nil
  "What a resource buffer shows: a plist (:conn :server :uri :subscribed :blobs).")

(defconst mcp-sidecar--modes-by-mime
  '(("text/markdown" . markdown-mode) ("application/json" . js-mode)
    ("text/html" . mhtml-mode) ("text/css" . css-mode) ("text/javascript" . js-mode)
    ("application/javascript" . js-mode) ("text/x-python" . python-mode)
    ("text/x-rust" . rust-mode) ("text/x-c" . c-mode) ("text/x-shellscript" . sh-mode)
    ("application/xml" . nxml-mode) ("text/xml" . nxml-mode) ("application/yaml" . yaml-mode)
    ("text/x-diff" . diff-mode))
  "Major modes of resources by MIME type.")

(defun mcp-sidecar--resource-mode (mime uri)
  "The major mode for a resource of MIME type at URI."
  (let* ((mime (and (stringp mime) (downcase (car (split-string mime ";")))))
         (mode (or (cdr (assoc mime mcp-sidecar--modes-by-mime))
                   (and mime (string-suffix-p "+json" mime) 'js-mode)
                   (and (stringp uri)
                        (assoc-default (replace-regexp-in-string "[?#].*" "" uri)
                                       auto-mode-alist #'string-match)))))
    (if (and (symbolp mode) (fboundp mode)) mode #'fundamental-mode)))

(defun mcp-sidecar--render-resource (result)
  "Insert the ReadResourceResult RESULT.
Return its binary contents and its first MIME type."
  (let ((contents (append (plist-get result :contents) nil)) blobs mime)
    (dolist (item contents)
      (setq mime (or mime (mcp-sidecar--text (plist-get item :mimeType))))
      (when (cdr contents)
        (insert (if (bobp) "" "\n") "--- " (or (mcp-sidecar--text (plist-get item :uri)) "?")
                " (" (or (mcp-sidecar--text (plist-get item :mimeType)) "?") ")\n"))
      (cond ((stringp (plist-get item :text)) (insert (plist-get item :text)))
            ((stringp (plist-get item :blob))
             (let ((bytes (ignore-errors (base64-decode-string (plist-get item :blob)))))
               (if (not bytes)
                   (insert "Binary content that is not valid base64.\n")
                 (push (list bytes (plist-get item :uri)) blobs)
                 (insert "Binary content: " (number-to-string (length bytes)) " bytes of "
                         (or (mcp-sidecar--text (plist-get item :mimeType)) "unknown type")
                         ". Press S to write them to a file.\n"))))))
    (unless contents
      (insert "The server returned no contents.\n"))
    (list (nreverse blobs) mime)))

(defun mcp-sidecar--fill-resource (buffer result)
  "Show RESULT in the resource BUFFER."
  (with-current-buffer buffer
    (let ((inhibit-read-only t) (point (point)))
      (erase-buffer)
      (let ((rendered (mcp-sidecar--render-resource result)))
        (setq mcp-sidecar--resource (plist-put mcp-sidecar--resource :blobs (car rendered)))
        (goto-char (min point (point-max)))))))

(defun mcp-sidecar-resource-refresh ()
  "Read this buffer's resource again."
  (interactive)
  (let ((state mcp-sidecar--resource) (buffer (current-buffer)))
    (unless state
      (user-error "This buffer shows no MCP resource"))
    (mcp-sidecar--exec (plist-get state :conn) 'read-resource
                       (list :server (plist-get state :server) :uri (plist-get state :uri))
                       (lambda (result)
                         (when (buffer-live-p buffer)
                           (mcp-sidecar--fill-resource buffer result))))))

(defun mcp-sidecar-resource-save ()
  "Write the binary contents of this buffer's resource to files."
  (interactive)
  (let ((blobs (plist-get mcp-sidecar--resource :blobs)))
    (unless blobs
      (user-error "This resource has no binary content"))
    (pcase-dolist (`(,bytes ,uri) blobs)
      (let* ((name (and (stringp uri) (car (last (split-string uri "/" t)))))
             (file (read-file-name "Write the bytes to: " nil nil nil
                                   (and name (replace-regexp-in-string
                                              "[^[:alnum:]_.-]+" "_" name)))))
        (let ((coding-system-for-write 'no-conversion))
          (write-region bytes nil file nil nil nil 'excl))
        (mcp-sidecar--say "wrote %d bytes to %s" (length bytes) file)))))

(defun mcp-sidecar--resource-killed ()
  "Unsubscribe from the resource of the buffer being killed."
  (let ((state mcp-sidecar--resource))
    (when (and state (plist-get state :subscribed)
               (jsonrpc-running-p (plist-get state :conn)))
      (mcp-sidecar--exec (plist-get state :conn) 'unsubscribe-resource
                         (list :server (plist-get state :server) :uri (plist-get state :uri))
                         #'ignore #'ignore))))

(defvar mcp-sidecar-resource-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "g" #'mcp-sidecar-resource-refresh)
    (define-key map "S" #'mcp-sidecar-resource-save)
    (define-key map "q" #'quit-window)
    map)
  "Keys of a resource buffer.")

(define-minor-mode mcp-sidecar-resource-mode
  "A read-only MCP resource: \\[mcp-sidecar-resource-refresh] reads it again, \\[mcp-sidecar-resource-save] saves binary contents.
It is read again when the server says it changed."
  :lighter " MCP"
  :keymap mcp-sidecar-resource-mode-map)

(defun mcp-sidecar--open-resource (conn server uri)
  "Read URI of SERVER through CONN into its buffer, and subscribe."
  (mcp-sidecar--exec
   conn 'read-resource (list :server server :uri uri)
   (lambda (result)
     (let ((buffer (get-buffer-create (concat "*mcp resource: " server " " uri "*"))))
       (with-current-buffer buffer
         (unless mcp-sidecar--resource
           (let ((first (car (append (plist-get result :contents) nil))))
             (funcall (mcp-sidecar--resource-mode (plist-get first :mimeType) uri)))
           (setq mcp-sidecar--resource (list :conn conn :server server :uri uri))
           (add-hook 'kill-buffer-hook #'mcp-sidecar--resource-killed nil t)
           (mcp-sidecar--exec conn 'subscribe-resource (list :server server :uri uri)
                              (lambda (_)
                                (when (buffer-live-p buffer)
                                  (with-current-buffer buffer
                                    (setq mcp-sidecar--resource
                                          (plist-put mcp-sidecar--resource :subscribed t)))))
                              #'ignore))
         (mcp-sidecar--fill-resource buffer result)
         (setq buffer-read-only t)
         (mcp-sidecar-resource-mode 1)
         (set-buffer-modified-p nil)
         (goto-char (point-min)))
       (pop-to-buffer buffer)
       (when (plist-get (buffer-local-value 'mcp-sidecar--resource buffer) :blobs)
         (mcp-sidecar--say "%s has binary content; S writes it to a file" uri))))
   (lambda (err) (mcp-sidecar--say "reading %s of %s failed: %s" uri server
                          (mcp-sidecar--error-message err)))))

(defun mcp-sidecar--resource-updated (conn params)
  "Read the resource PARAMS name of CONN again, in the buffers that show it."
  (dolist (buffer (buffer-list))
    (let ((state (buffer-local-value 'mcp-sidecar--resource buffer)))
      (when (and state (eq (plist-get state :conn) conn)
                 (equal (plist-get state :server) (plist-get params :server))
                 (equal (plist-get state :uri) (plist-get params :uri)))
        (with-current-buffer buffer
          (mcp-sidecar-resource-refresh))))))

(defun mcp-sidecar--complete-values (conn server ref name typed context)
  "The server's suggestions for argument NAME (TYPED so far) of REF.
Asks SERVER through CONN, with the earlier answers CONTEXT; nil on a failure."
  (condition-case nil
      (let ((result (mcp-sidecar--exec-sync
                     conn 'complete
                     (append (list :server server :ref ref
                                   :argument (list :name name :value typed))
                             (and context (list :context (list :arguments context)))))))
        (cl-remove-if-not #'stringp (append (plist-get (plist-get result :completion) :values)
                                            nil)))
    (user-error nil)))

(defun mcp-sidecar--expand-template (conn row)
  "Ask the variables of the template ROW of CONN and return the URI it expands to."
  (let* ((template (plist-get row :uriTemplate))
         (server (plist-get row :server))
         (ref (list :type "ref/resource" :uri template))
         (variables (append (plist-get (mcp-sidecar--exec-sync
                                        conn 'expand-uri-template (list :uriTemplate template))
                                       :variables)
                            nil))
         values)
    (dolist (name variables)
      (let* ((context values)
             (table (completion-table-dynamic
                     (lambda (typed)
                       (mcp-sidecar--complete-values conn server ref name typed context))))
             (value (completing-read (concat server ": " (mcp-sidecar--name row) " › " name
                                             " (empty: undefined): ")
                                     table)))
        (unless (equal value "")
          (setq values (plist-put values (intern (concat ":" name)) value)))))
    (plist-get (mcp-sidecar--exec-sync conn 'expand-uri-template
                                       (append (list :uriTemplate template)
                                               (and values (list :values values))))
               :uri)))

(defun mcp-sidecar--resource-line (row)
  "A resource or template ROW as a candidate."
  (let ((mime (mcp-sidecar--text (plist-get row :mimeType))))
    (concat (plist-get row :server) " › "
            (or (mcp-sidecar--text (plist-get row :title)) (mcp-sidecar--name row))
            (if (plist-get row :uriTemplate)
                (concat " [template] — " (plist-get row :uriTemplate))
              (concat " — " (or (plist-get row :uri) "")))
            (if mime (concat " (" mime ")") ""))))

;;;###autoload
(defun mcp-sidecar-read-resource (server uri)
  "Show the resource URI of the MCP SERVER in a buffer, kept current.
Interactively, pick a resource or a template of the running servers; a
template's variables are asked, with the server's completions."
  (interactive
   (let* ((conn (mcp-sidecar--ensure))
          (rows (append (mcp-sidecar--exec-sync conn 'list-resources) nil
                        (mcp-sidecar--exec-sync conn 'list-resource-templates) nil)))
     (unless rows
       (user-error "The running servers have no resources"))
     (let ((row (mcp-sidecar--pick-row "Read which MCP resource? " rows
                                       #'mcp-sidecar--resource-line)))
       (list (plist-get row :server)
             (if (plist-get row :uriTemplate)
                 (mcp-sidecar--expand-template conn row)
               (plist-get row :uri))))))
  (mcp-sidecar--open-resource (mcp-sidecar--ensure) server uri))

(defun mcp-sidecar--show-prompt-result (server name result)
  "Show the GetPromptResult RESULT of prompt NAME of SERVER in a buffer."
  (mcp-sidecar--show-buffer
   (concat "*mcp prompt: " server "/" name "*")
   (lambda ()
     (insert "# " server " › " name "\n\n")
     (when (mcp-sidecar--text (plist-get result :description))
       (insert (plist-get result :description) "\n\n"))
     (let ((messages (append (plist-get result :messages) nil)))
       (dolist (message messages)
         (insert "## " (or (mcp-sidecar--text (plist-get message :role)) "message") "\n\n")
         (mcp-sidecar--insert-content (plist-get message :content))
         (insert "\n"))
       (unless messages
         (insert "The prompt has no messages.\n"))))))

;;;###autoload
(defun mcp-sidecar-get-prompt (server name)
  "Run the prompt NAME of the MCP SERVER and show its messages in a buffer.
Interactively, pick one of the running servers' prompts.  The sidecar asks
for the prompt's arguments, one question each (with the server's
completions), and a review."
  (interactive
   (let* ((conn (mcp-sidecar--ensure))
          (rows (append (mcp-sidecar--exec-sync conn 'list-prompts) nil)))
     (unless rows
       (user-error "The running servers have no prompts"))
     (let ((row (mcp-sidecar--pick-row
                 "Run which MCP prompt? " rows
                 (lambda (row)
                   (let ((description (mcp-sidecar--text (plist-get row :description))))
                     (concat (plist-get row :server) " › " (mcp-sidecar--name row)
                             (if description (concat " — " description) "")))))))
       (list (plist-get row :server) (plist-get row :name)))))
  (mcp-sidecar--exec (mcp-sidecar--ensure) 'get-prompt (list :server server :name name)
                     (lambda (result) (mcp-sidecar--show-prompt-result server name result))
                     (lambda (err) (mcp-sidecar--report (concat server " › " name) err))))

(provide 'mcp-sidecar-resources)
;;; mcp-sidecar-resources.el ends here
