/** Every text the hosted checkout shows, in each language it speaks. */

/** The checkout's languages; the first is the default. */
export const LANGUAGES = ["en", "ru"] as const;
export type Language = (typeof LANGUAGES)[number];

/** What the payer is asked to do, or told, in each state of the page. */
export type CheckoutState = "awaiting_payment" | "awaiting_receipt" | "under_review" | "paid" | "declined" | "expired" | "cancelled" | "not_found";

/** Why an upload was refused, in the payer's terms. */
export type UploadProblem = "too_large" | "wrong_type" | "empty" | "no_file" | "not_accepted_now" | "try_later";

interface Texts {
  pageTitle: string;
  amount: string;
  requisites: string;
  number: string;
  recipient: string;
  bank: string;
  copy: string;
  copied: string;
  timeLeft: string;
  payBefore: (utc: string) => string;
  receiptLabel: string;
  receiptHint: string;
  sendReceipt: string;
  refresh: string;
  states: Record<CheckoutState, { title: string; message: string }>;
  uploadProblems: Record<UploadProblem, string>;
}

const en: Texts = {
  pageTitle: "Payment",
  amount: "Amount",
  requisites: "Payment details",
  number: "Transfer to",
  recipient: "Recipient",
  bank: "Bank",
  copy: "Copy",
  copied: "Copied",
  timeLeft: "Time left to pay:",
  payBefore: (utc) => `until ${utc} UTC`,
  receiptLabel: "Receipt of your transfer",
  receiptHint: "PDF, JPEG or PNG, up to 10 MB.",
  sendReceipt: "Send receipt",
  refresh: "Check the status again",
  states: {
    awaiting_payment: { title: "Awaiting payment", message: "Transfer exactly the amount shown to the details below. This page updates when the money arrives." },
    awaiting_receipt: { title: "Awaiting your receipt", message: "Transfer exactly the amount shown to the details below, then upload the receipt your bank gave you." },
    under_review: { title: "Under review", message: "We have your receipt and are checking the transfer. You can close this page." },
    paid: { title: "Paid", message: "The payment has been received. Thank you!" },
    declined: { title: "Declined", message: "The payment was declined. Do not transfer money to these details; contact the shop." },
    expired: { title: "Expired", message: "The time to pay has run out. Do not transfer money; ask the shop for a new payment." },
    cancelled: { title: "Cancelled", message: "The shop cancelled this payment. Do not transfer money." },
    not_found: { title: "Payment not found", message: "This payment link is not valid. Check the link or ask the shop for a new one." },
  },
  uploadProblems: {
    too_large: "The file is larger than 10 MB. Upload a smaller file or a screenshot of the receipt.",
    wrong_type: "This type of file is not accepted. Upload the receipt as a PDF, JPEG or PNG file.",
    empty: "The file is empty. Choose the receipt file again.",
    no_file: "Choose one receipt file (PDF, JPEG or PNG) before sending.",
    not_accepted_now: "This payment does not take a receipt any more. Its status is shown below.",
    try_later: "The receipt could not be checked right now. Please try again in a minute.",
  },
};

const ru: Texts = {
  pageTitle: "Оплата",
  amount: "Сумма",
  requisites: "Реквизиты для перевода",
  number: "Куда перевести",
  recipient: "Получатель",
  bank: "Банк",
  copy: "Копировать",
  copied: "Скопировано",
  timeLeft: "Осталось времени на оплату:",
  payBefore: (utc) => `до ${utc} UTC`,
  receiptLabel: "Чек о переводе",
  receiptHint: "PDF, JPEG или PNG, не больше 10 МБ.",
  sendReceipt: "Отправить чек",
  refresh: "Проверить статус ещё раз",
  states: {
    awaiting_payment: { title: "Ожидаем оплату", message: "Переведите ровно указанную сумму по реквизитам ниже. Страница обновится, когда деньги поступят." },
    awaiting_receipt: { title: "Ожидаем чек", message: "Переведите ровно указанную сумму по реквизитам ниже и загрузите чек, который выдал ваш банк." },
    under_review: { title: "На проверке", message: "Мы получили чек и проверяем перевод. Страницу можно закрыть." },
    paid: { title: "Оплачено", message: "Платёж получен. Спасибо!" },
    declined: { title: "Отклонено", message: "Платёж отклонён. Не переводите деньги по этим реквизитам, обратитесь в магазин." },
    expired: { title: "Время истекло", message: "Время на оплату истекло. Не переводите деньги, попросите у магазина новый платёж." },
    cancelled: { title: "Отменено", message: "Магазин отменил этот платёж. Не переводите деньги." },
    not_found: { title: "Платёж не найден", message: "Ссылка на оплату недействительна. Проверьте её или попросите у магазина новую." },
  },
  uploadProblems: {
    too_large: "Файл больше 10 МБ. Загрузите файл поменьше или снимок экрана с чеком.",
    wrong_type: "Такой файл не подходит. Загрузите чек в формате PDF, JPEG или PNG.",
    empty: "Файл пустой. Выберите файл чека ещё раз.",
    no_file: "Выберите один файл чека (PDF, JPEG или PNG) и отправьте его.",
    not_accepted_now: "Этот платёж больше не принимает чек. Его статус показан ниже.",
    try_later: "Сейчас не удалось проверить чек. Попробуйте ещё раз через минуту.",
  },
};

/** The texts of the page in `language`. */
export const TEXTS: Record<Language, Texts> = { en, ru };
