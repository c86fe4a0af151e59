;;; mcp-sidecar-ui.el --- The sidecar's questions in the minibuffer, its drafts in buffers  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The editor's side of `mcp-sidecar/inputBox', `mcp-sidecar/quickPick',
;; `mcp-sidecar/editDraft' and `mcp-sidecar/cancelPrompt' (docs/lsp-extensions.md).
;;
;; A request that needs a person is never answered inside the process filter: its handler
;; returns a prompt object at once, which `jsonrpc-connection-send' of
;; `mcp-sidecar-connection' keeps instead of sending (mcp-sidecar-client.el), and the
;; minibuffer or the draft opens from a timer.  The answer goes out when the person gives it,
;; or null when the sidecar cancels the prompt.  One minibuffer question shows at a time; the
;; others wait in a queue, also while another minibuffer is active.
;;
;; The sidecar runs the steps of a form itself (the step counter, Back, Skip, the review):
;; each question shows its step, and `C-c C-b' (Back) and `C-c C-s' (Skip) answer
;; {"back": true} and {"skip": true} where the question allows them.  `C-g' dismisses it.

;;; Code:

(require 'cl-lib)
(require 'crm)
(require 'jsonrpc)
(require 'mcp-sidecar)

(declare-function mcp-sidecar--root-of "mcp-sidecar-client" (conn))

(cl-defstruct (mcp-sidecar--prompt (:constructor mcp-sidecar--prompt-create)
                                   (:copier nil))
  "A question or draft of the sidecar that waits for its answer."
  conn id kind params
  (reply-id nil :documentation "The JSON-RPC id of the request to answer.")
  (sent nil :documentation "Whether the answer went out.")
  (answered nil :documentation "Whether the prompt has its answer.")
  (answer nil :documentation "The answer: a plist, or nil for null.")
  (closer nil :documentation "Closes what shows the prompt, when it is cancelled."))

(defvar mcp-sidecar--pending nil
  "Every prompt without its answer yet, newest first.")

(defvar mcp-sidecar--queue nil
  "The minibuffer questions waiting to be shown, oldest first.")

(defvar mcp-sidecar--showing nil
  "The question the minibuffer shows now.")

(defvar mcp-sidecar--open nil
  "The questions whose minibuffer is active, innermost first (bound dynamically).")

(defvar mcp-sidecar--exiting nil
  "Non-nil while Emacs exits: closing a question must not interrupt that.")

(defvar mcp-sidecar--exit-with nil
  "The answer of the key that ended the current question.
The Back key sets it to (:back t).")

(defvar mcp-sidecar--input-history nil
  "Text typed into the sidecar's questions (not passwords).")

(defvar mcp-sidecar--pick-history nil
  "Choices made in the sidecar's questions.")

(defun mcp-sidecar--say (format-string &rest args)
  "Show a message of mcp-sidecar: FORMAT-STRING (always a literal) with ARGS."
  (apply #'message (concat "mcp-sidecar: " format-string) args))

(defun mcp-sidecar--true-p (value)
  "Whether the JSON VALUE is true."
  (eq value t))

(defun mcp-sidecar--text (value)
  "VALUE when it is a non-empty string, else nil."
  (and (stringp value) (not (equal value "")) value))

;;; Answers

(defun mcp-sidecar--send-answer (prompt)
  "Send the answer of PROMPT once both it and its request id are known."
  (when (and (mcp-sidecar--prompt-answered prompt)
             (mcp-sidecar--prompt-reply-id prompt)
             (not (mcp-sidecar--prompt-sent prompt)))
    (setf (mcp-sidecar--prompt-sent prompt) t)
    (let ((conn (mcp-sidecar--prompt-conn prompt)))
      (when (jsonrpc-running-p conn)
        (condition-case err
            (jsonrpc-connection-send conn :id (mcp-sidecar--prompt-reply-id prompt)
                                     :result (mcp-sidecar--prompt-answer prompt))
          (error (mcp-sidecar--say "could not answer the sidecar: %s"
                          (error-message-string err))))))))

(defun mcp-sidecar--settle (prompt answer)
  "Answer PROMPT with ANSWER (a plist, or nil for null) unless it has its answer.
Return non-nil when this call answered it."
  (unless (mcp-sidecar--prompt-answered prompt)
    (setf (mcp-sidecar--prompt-answered prompt) t
          (mcp-sidecar--prompt-answer prompt) answer)
    (setq mcp-sidecar--pending (delq prompt mcp-sidecar--pending)
          mcp-sidecar--queue (delq prompt mcp-sidecar--queue))
    (mcp-sidecar--send-answer prompt)
    (force-mode-line-update t)
    t))

(defun mcp-sidecar--cancel (prompt)
  "Answer PROMPT with null and close its minibuffer or buffer."
  (when (mcp-sidecar--settle prompt nil)
    (let ((closer (mcp-sidecar--prompt-closer prompt)))
      (when closer
        ;; From a timer: it runs inside the minibuffer's wait, where the prompt's catch is.
        (run-at-time 0 nil closer)))))

(defun mcp-sidecar--cancel-all (conn)
  "Close every prompt of the sidecar CONN (it exited)."
  (dolist (prompt (copy-sequence mcp-sidecar--pending))
    (when (eq (mcp-sidecar--prompt-conn prompt) conn)
      (mcp-sidecar--cancel prompt))))

(defun mcp-sidecar--asking (&optional conn)
  "Count the questions and drafts waiting, of CONN or of every sidecar."
  (cl-count-if (lambda (prompt) (or (null conn) (eq (mcp-sidecar--prompt-conn prompt) conn)))
               mcp-sidecar--pending))

(defun mcp-sidecar--defer (conn params kind)
  "Register the request of CONN with PARAMS, a prompt of KIND, and schedule its UI.
KIND is `input', `pick' or `draft'.  Return the prompt, which the
dispatcher returns for `jsonrpc-connection-send' to hold."
  (let* ((id (plist-get params :id))
         (prompt (mcp-sidecar--prompt-create
                  :conn conn :id (if (stringp id) id (format "%s" id))
                  :kind kind :params params)))
    ;; A new prompt with the id of a pending one replaces it.
    (dolist (old (copy-sequence mcp-sidecar--pending))
      (when (and (eq (mcp-sidecar--prompt-conn old) conn)
                 (equal (mcp-sidecar--prompt-id old) (mcp-sidecar--prompt-id prompt)))
        (mcp-sidecar--cancel old)))
    (push prompt mcp-sidecar--pending)
    (if (eq kind 'draft)
        (run-at-time 0 nil #'mcp-sidecar--open-draft prompt)
      (setq mcp-sidecar--queue (append mcp-sidecar--queue (list prompt)))
      (run-at-time 0 nil #'mcp-sidecar--show-next))
    (force-mode-line-update t)
    prompt))

;;; Handlers (the table is `mcp-sidecar--handlers' in mcp-sidecar-client.el)

(defun mcp-sidecar--on-input-box (conn params)
  "Handle `mcp-sidecar/inputBox' from CONN with PARAMS."
  (mcp-sidecar--defer conn params 'input))

(defun mcp-sidecar--on-quick-pick (conn params)
  "Handle `mcp-sidecar/quickPick' from CONN with PARAMS."
  (mcp-sidecar--defer conn params 'pick))

(defun mcp-sidecar--on-edit-draft (conn params)
  "Handle `mcp-sidecar/editDraft' from CONN with PARAMS."
  (mcp-sidecar--defer conn params 'draft))

(defun mcp-sidecar--on-cancel-prompt (conn params)
  "Handle `mcp-sidecar/cancelPrompt' from CONN with PARAMS: close that prompt."
  (let ((id (plist-get params :id)))
    (dolist (prompt (copy-sequence mcp-sidecar--pending))
      (when (and (eq (mcp-sidecar--prompt-conn prompt) conn)
                 (equal (mcp-sidecar--prompt-id prompt) id))
        (mcp-sidecar--cancel prompt)))))

;;; Wording

(defun mcp-sidecar--title (params)
  "The first part of a question with PARAMS.
For example \"[step 2/9] travel: Confirm your trip\"."
  (let ((step (plist-get params :step))
        (total (plist-get params :totalSteps))
        (title (or (mcp-sidecar--text (plist-get params :title)) "MCP"))
        (server (mcp-sidecar--text (plist-get params :server))))
    (when (and server (not (string-search server title)))
      (setq title (concat server ": " title)))
    (concat (cond ((and (numberp step) (numberp total))
                   (concat "[step " (number-to-string step) "/" (number-to-string total) "] "))
                  ((numberp step) (concat "[step " (number-to-string step) "] "))
                  (t ""))
            title)))

(defun mcp-sidecar--key-hints (params &optional more)
  "The hints of the keys PARAMS allow, MORE first: \" [back · skip]\"."
  (let ((hints (append more
                       (and (mcp-sidecar--true-p (plist-get params :canGoBack))
                            '("C-c C-b back"))
                       (and (mcp-sidecar--true-p (plist-get params :canSkip))
                            '("C-c C-s skip")))))
    (if hints (concat " [" (mapconcat #'identity hints " · ") "]") "")))

(defun mcp-sidecar--input-prompt (params)
  "The minibuffer prompt of an inputBox with PARAMS."
  (let ((prompt (mcp-sidecar--text (plist-get params :prompt)))
        (placeholder (mcp-sidecar--text (plist-get params :placeholder)))
        (problem (mcp-sidecar--text (plist-get params :validationMessage))))
    (concat (if problem (concat "⚠ " problem " · ") "")
            (mcp-sidecar--title params)
            (if prompt (concat " › " prompt) "")
            (if placeholder (concat " (" placeholder ")") "")
            (if (mcp-sidecar--true-p (plist-get params :password)) " [hidden]" "")
            (mcp-sidecar--key-hints params)
            ": ")))

(defun mcp-sidecar--pick-prompt (params &optional more-hints)
  "The minibuffer prompt of a quickPick with PARAMS; MORE-HINTS go into its keys."
  (let ((placeholder (mcp-sidecar--text (plist-get params :placeholder))))
    (concat (mcp-sidecar--title params)
            (if placeholder (concat " › " placeholder) "")
            (mcp-sidecar--key-hints params more-hints)
            ": ")))

(defun mcp-sidecar--item-line (item)
  "One quickPick ITEM as a line: \"Economy — economy · cheapest\"."
  (let ((description (mcp-sidecar--text (plist-get item :description)))
        (detail (mcp-sidecar--text (plist-get item :detail))))
    (concat (or (mcp-sidecar--text (plist-get item :label)) "")
            (if description (concat " — " description) "")
            (if detail (concat " · " detail) ""))))

(defun mcp-sidecar--unique (lines)
  "LINES, each made unique with a \" <n>\" suffix where it repeats."
  (let ((seen (make-hash-table :test #'equal)))
    (mapcar (lambda (line)
              (let ((n (1+ (gethash line seen 0))))
                (puthash line n seen)
                (if (= n 1) line (concat line " <" (number-to-string n) ">"))))
            lines)))

(defun mcp-sidecar--table (candidates)
  "A completion table of CANDIDATES, in their order."
  (lambda (string predicate action)
    (if (eq action 'metadata)
        '(metadata (category . mcp-sidecar)
                   (display-sort-function . identity)
                   (cycle-sort-function . identity))
      (complete-with-action action candidates string predicate))))

;;; Minibuffer questions

(defvar mcp-sidecar-minibuffer-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-b") #'mcp-sidecar-minibuffer-back)
    (define-key map (kbd "C-c C-s") #'mcp-sidecar-minibuffer-skip)
    map)
  "Keys of the sidecar's questions in the minibuffer, over its usual keys.")

(defun mcp-sidecar--showing-allows (key)
  "Whether the question shown now has KEY true (:canGoBack or :canSkip)."
  (and mcp-sidecar--open
       (mcp-sidecar--true-p
        (plist-get (mcp-sidecar--prompt-params (car mcp-sidecar--open)) key))))

(defun mcp-sidecar-minibuffer-back ()
  "Answer the question with Back: the sidecar asks the previous step again."
  (interactive)
  (unless (mcp-sidecar--showing-allows :canGoBack)
    (user-error "This question has no previous step"))
  (setq mcp-sidecar--exit-with (list :back t))
  (exit-minibuffer))

(defun mcp-sidecar-minibuffer-skip ()
  "Answer the question with Skip: the field stays empty."
  (interactive)
  (unless (mcp-sidecar--showing-allows :canSkip)
    (user-error "This question cannot be skipped"))
  (setq mcp-sidecar--exit-with (list :skip t))
  (exit-minibuffer))

(defmacro mcp-sidecar--with-keys (&rest body)
  "Run BODY with `mcp-sidecar-minibuffer-map' in the minibuffer it opens."
  (declare (indent 0) (debug t))
  `(minibuffer-with-setup-hook
       (:append (lambda ()
                  (use-local-map (make-composed-keymap mcp-sidecar-minibuffer-map
                                                       (current-local-map)))))
     ,@body))

(defun mcp-sidecar--read-input (params)
  "Ask the inputBox with PARAMS; return its answer (nil when dismissed)."
  (let* ((mcp-sidecar--exit-with nil)
         (prompt (mcp-sidecar--input-prompt params))
         (value (plist-get params :value))
         (typed (mcp-sidecar--with-keys
                  (if (mcp-sidecar--true-p (plist-get params :password))
                      (read-passwd prompt)
                    (read-from-minibuffer prompt (and (stringp value) value) nil nil
                                          'mcp-sidecar--input-history)))))
    (or mcp-sidecar--exit-with
        (list :value (substring-no-properties typed)))))

(defun mcp-sidecar--pick-entries (params)
  "The choices of a single quickPick with PARAMS: a list of (LINE . ANSWER).
The items come first (one marked \"(current)\" when it is preselected), then
Back and Skip where PARAMS allow them."
  (let* ((items (append (plist-get params :items) nil))
         (lines (mcp-sidecar--unique
                 (mapcar (lambda (item)
                           (concat (mcp-sidecar--item-line item)
                                   (if (mcp-sidecar--true-p (plist-get item :picked))
                                       " (current)" "")))
                         items)))
         (index -1))
    (append (mapcar (lambda (line)
                      (setq index (1+ index))
                      (cons line (list :selected (vector index))))
                    lines)
            (and (mcp-sidecar--true-p (plist-get params :canGoBack))
                 (list (cons "← Back" (list :back t))))
            (and (mcp-sidecar--true-p (plist-get params :canSkip))
                 (list (cons "Skip" (list :skip t)))))))

(defun mcp-sidecar--read-pick (params)
  "Ask the single quickPick with PARAMS; return its answer (nil when dismissed)."
  (let* ((entries (mcp-sidecar--pick-entries params))
         (items (append (plist-get params :items) nil))
         (picked (cl-position-if (lambda (item) (mcp-sidecar--true-p (plist-get item :picked)))
                                 items))
         (default (and picked (car (nth picked entries))))
         (prompt (mcp-sidecar--pick-prompt params))
         (mcp-sidecar--exit-with nil)
         answer)
    (while (not answer)
      (let ((choice (mcp-sidecar--with-keys
                      (completing-read prompt (mcp-sidecar--table (mapcar #'car entries))
                                       nil t nil 'mcp-sidecar--pick-history default))))
        (setq answer (or mcp-sidecar--exit-with (cdr (assoc choice entries))))))
    answer))

(defun mcp-sidecar--separator (lines)
  "A separator for `completing-read-multiple' absent from all LINES."
  (or (cl-find-if (lambda (sep) (not (cl-some (lambda (line) (string-search sep line)) lines)))
                  '("," ";" "|" "+"))
      ","))

(defun mcp-sidecar--read-many (params)
  "Ask the quickPick with PARAMS and canPickMany.
Return its answer (nil when dismissed)."
  (let* ((items (append (plist-get params :items) nil))
         (lines (mcp-sidecar--unique (mapcar #'mcp-sidecar--item-line items)))
         (sep (mcp-sidecar--separator lines))
         (lines (if (equal sep ",")
                    (mapcar (lambda (line) (string-replace "," "‚" line)) lines)
                  lines))
         (back (and (mcp-sidecar--true-p (plist-get params :canGoBack)) "← Back"))
         (skip (and (mcp-sidecar--true-p (plist-get params :canSkip)) "Skip"))
         (initial (mapconcat #'identity
                             (cl-loop for item in items for line in lines
                                      when (mcp-sidecar--true-p (plist-get item :picked))
                                      collect line)
                             sep))
         (crm-separator (concat "[ \t]*" (regexp-quote sep) "[ \t]*"))
         (prompt (mcp-sidecar--pick-prompt
                  params (list (concat "several, separated by " sep) "empty: none")))
         (mcp-sidecar--exit-with nil)
         (chosen (mcp-sidecar--with-keys
                   (completing-read-multiple
                    prompt (mcp-sidecar--table (append lines (delq nil (list back skip))))
                    nil t (and (not (equal initial "")) initial) 'mcp-sidecar--pick-history))))
    (cond (mcp-sidecar--exit-with)
          ((and back (member back chosen)) (list :back t))
          ((and skip (member skip chosen)) (list :skip t))
          (t (list :selected
                   (vconcat (sort (delete-dups
                                   (delq nil (mapcar (lambda (line) (cl-position line lines
                                                                                 :test #'equal))
                                                     chosen)))
                                  #'<)))))))

(defun mcp-sidecar--ask (prompt)
  "Ask PROMPT in the minibuffer: its answer, nil when dismissed, or :cancelled.
A question that cannot be shown (an error) counts as dismissed."
  (let* ((tag (make-symbol "mcp-sidecar-prompt"))
         (params (mcp-sidecar--prompt-params prompt))
         (inhibit-quit nil))
    (setf (mcp-sidecar--prompt-closer prompt)
          (lambda ()
            (when (and (memq prompt mcp-sidecar--open) (not mcp-sidecar--exiting))
              (throw tag :cancelled))))
    (catch tag
      (let ((mcp-sidecar--open (cons prompt mcp-sidecar--open)))
        (condition-case err
            (cond ((eq (mcp-sidecar--prompt-kind prompt) 'input)
                   (mcp-sidecar--read-input params))
                  ((mcp-sidecar--true-p (plist-get params :canPickMany))
                   (mcp-sidecar--read-many params))
                  (t (mcp-sidecar--read-pick params)))
          (quit nil)
          (error (mcp-sidecar--say "could not show the question: %s" (error-message-string err))
                 nil))))))

(defun mcp-sidecar--show (prompt)
  "Show PROMPT in the minibuffer and settle it with the answer.
When something else leaves the minibuffer (another throw), the question
goes back into the queue."
  (let (finished answer)
    (setq mcp-sidecar--showing prompt)
    (unwind-protect
        (progn (setq answer (mcp-sidecar--ask prompt))
               (setq finished t))
      (setq mcp-sidecar--showing nil)
      (setf (mcp-sidecar--prompt-closer prompt) nil)
      (unless (or finished (mcp-sidecar--prompt-answered prompt))
        (push prompt mcp-sidecar--queue)
        (run-at-time 0.2 nil #'mcp-sidecar--show-next)))
    (unless (eq answer :cancelled)
      (mcp-sidecar--settle prompt answer))))

(defun mcp-sidecar--show-next ()
  "Show the next waiting question when the minibuffer is free."
  (cond ((or mcp-sidecar--showing (null mcp-sidecar--queue)))
        ((active-minibuffer-window)
         (run-at-time 0.2 nil #'mcp-sidecar--show-next))
        (t (let ((prompt (pop mcp-sidecar--queue)))
             (unless (mcp-sidecar--prompt-answered prompt)
               (mcp-sidecar--show prompt))
             (when mcp-sidecar--queue
               (run-at-time 0 nil #'mcp-sidecar--show-next))))))

;;; Drafts

(defvar-local mcp-sidecar-draft nil
  "The sidecar's prompt this draft buffer answers.")

(defvar mcp-sidecar-draft-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'mcp-sidecar-draft-accept)
    (define-key map (kbd "C-c C-k") #'mcp-sidecar-draft-reject)
    map)
  "Keys of a draft buffer.")

(define-minor-mode mcp-sidecar-draft-mode
  "A draft the sidecar opened: \\[mcp-sidecar-draft-accept] sends it, \\[mcp-sidecar-draft-reject] rejects it.
Killing the buffer answers neither (the sidecar treats it as dismissed)."
  :lighter " Draft"
  :keymap mcp-sidecar-draft-mode-map)

(defface mcp-sidecar-problem '((t :inherit error :underline t))
  "Face of a draft line the sidecar could not read."
  :group 'mcp-sidecar)

(defun mcp-sidecar--draft-major-mode (language)
  "The major mode for a draft in LANGUAGE (an LSP language id)."
  (let ((mode (pcase language
                ("markdown" 'markdown-mode)
                ("json" (if (fboundp 'js-json-mode) 'js-json-mode 'js-mode))
                ((pred stringp) (intern (concat language "-mode"))))))
    (if (and mode (fboundp mode)) mode 'text-mode)))

(defun mcp-sidecar--draft-header (params)
  "The header line of a draft with PARAMS: who asks, and the keys."
  (string-replace "%" "%%"
                  (concat (or (mcp-sidecar--text (plist-get params :title)) "MCP draft")
                          " — C-c C-c accept · C-c C-k reject")))

(defun mcp-sidecar--show-problems (problems)
  "Mark the lines of the current buffer that PROBLEMS name, with their messages."
  (let ((lines (count-lines (point-min) (point-max))))
    (dolist (problem (append problems nil))
      (let ((line (plist-get problem :line))
            (text (or (mcp-sidecar--text (plist-get problem :message)) "problem")))
        (save-excursion
          (goto-char (point-min))
          (forward-line (min (max 0 (if (integerp line) line 0)) (max 0 (1- lines))))
          (let ((overlay (make-overlay (line-beginning-position) (line-end-position))))
            (overlay-put overlay 'face 'mcp-sidecar-problem)
            (overlay-put overlay 'help-echo text)
            (overlay-put overlay 'after-string
                         (propertize (concat "  ← " text) 'face 'error))))))
    (when problems
      (mcp-sidecar--say "%d problem(s) in the draft, marked in red"
               (length problems)))))

(defun mcp-sidecar--draft-killed ()
  "Answer null for the draft of the buffer being killed (`kill-buffer-hook')."
  (when mcp-sidecar-draft
    (mcp-sidecar--settle mcp-sidecar-draft nil)))

(defun mcp-sidecar--open-draft (prompt)
  "Open the draft PROMPT asks for in a buffer of its own and select it."
  (unless (mcp-sidecar--prompt-answered prompt)
    (let* ((params (mcp-sidecar--prompt-params prompt))
           (server (or (mcp-sidecar--text (plist-get params :server)) "sidecar"))
           (buffer (generate-new-buffer (concat "*mcp draft: " server "*"))))
      (with-current-buffer buffer
        (funcall (mcp-sidecar--draft-major-mode (plist-get params :language)))
        (let ((inhibit-read-only t))
          (insert (or (mcp-sidecar--text (plist-get params :text)) "")))
        (goto-char (point-min))
        (setq mcp-sidecar-draft prompt)
        (setq default-directory (file-name-as-directory
                                 (mcp-sidecar--root-of (mcp-sidecar--prompt-conn prompt))))
        (mcp-sidecar-draft-mode 1)
        (setq header-line-format (mcp-sidecar--draft-header params))
        (set-buffer-modified-p nil)
        (add-hook 'kill-buffer-hook #'mcp-sidecar--draft-killed nil t)
        (mcp-sidecar--show-problems (plist-get params :problems)))
      (setf (mcp-sidecar--prompt-closer prompt)
            (lambda () (mcp-sidecar--close-draft buffer)))
      (pop-to-buffer buffer))))

(defun mcp-sidecar--close-draft (buffer)
  "Kill the draft BUFFER and the window it got."
  (when (buffer-live-p buffer)
    (let ((window (get-buffer-window buffer)))
      (if (and window (not (one-window-p t window)))
          (quit-window t window)
        (kill-buffer buffer)))))

(defun mcp-sidecar--draft-answer (answer)
  "Answer the draft of the current buffer with ANSWER and close it."
  (let ((prompt mcp-sidecar-draft))
    (unless prompt
      (user-error "This buffer is not a draft of the sidecar"))
    (when (mcp-sidecar--settle prompt answer)
      (mcp-sidecar--close-draft (current-buffer)))))

(defun mcp-sidecar-draft-accept ()
  "Send the draft as it is now, exactly this text."
  (interactive)
  (mcp-sidecar--draft-answer
   (list :action "accept"
         :text (buffer-substring-no-properties (point-min) (point-max)))))

(defun mcp-sidecar-draft-reject ()
  "Reject the draft: the sidecar refuses what it was for."
  (interactive)
  (mcp-sidecar--draft-answer (list :action "reject")))

(provide 'mcp-sidecar-ui)
;;; mcp-sidecar-ui.el ends here
